// The admin API client. The master key lives in sessionStorage only (gone when the tab
// closes, never in a URL) and travels as `Authorization: Bearer`.

const keyName = 'model-gateway.master-key';

/** An error answer of the admin API: the CONTRACT 4 envelope's fields, or a network failure. */
export class ApiError extends Error {
  constructor(message, { status = 0, type = null, code = null, param = null } = {}) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.type = type;
    this.code = code;
    this.param = param;
  }

  /** A switched-off feature (`RATE_LIMITS_ENABLED=false`, ...). */
  get featureOff() {
    return this.code === 'feature_unavailable';
  }
}

/** The stored key: a string ('' in open mode) or null when signed out. */
export function storedKey() {
  return sessionStorage.getItem(keyName);
}

export function storeKey(key) {
  sessionStorage.setItem(keyName, key);
}

export function forgetKey() {
  sessionStorage.removeItem(keyName);
}

const listeners = new Set();

/** Called with the ApiError whenever the API answers 401 (the key was changed or is wrong). */
export function onUnauthorized(listener) {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

/** How long one call may take, answer body included, before it fails as unreachable. */
const timeoutMs = 10_000;

/**
 * One admin API call. Resolves with the parsed JSON; rejects with an ApiError carrying the
 * envelope's message. `key` overrides the stored key (used to probe at sign-in); `signal`
 * (an AbortSignal) cancels the call, which then rejects with an AbortError (see `aborted`).
 * A call that has no answer within `timeoutMs` rejects with an ApiError of status 0, so a
 * hung connection shows "Offline" and never stalls a page's refresh timer.
 */
export async function api(method, path, body, { key = storedKey(), quiet = false, signal } = {}) {
  const headers = { accept: 'application/json' };
  if (key) headers.authorization = `Bearer ${key}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const timeout = AbortSignal.timeout(timeoutMs);
  let response;
  let text;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      cache: 'no-store',
      credentials: 'omit',
      signal: signal === undefined ? timeout : AbortSignal.any([signal, timeout]),
    });
    text = await response.text();
  } catch (error) {
    if (aborted(error)) throw error;
    if (timeout.aborted) throw new ApiError(`The gateway did not answer within ${timeoutMs / 1000} s.`);
    throw new ApiError('The gateway cannot be reached. Is it running?');
  }
  const parsed = parseJson(text);
  if (response.ok) return parsed;
  const error = toApiError(response.status, parsed, text);
  if (response.status === 401 && !quiet) for (const listener of listeners) listener(error);
  throw error;
}

/** Whether `error` is the rejection of a call cancelled through its AbortSignal. */
export function aborted(error) {
  return error?.name === 'AbortError';
}

function parseJson(text) {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function toApiError(status, parsed, text) {
  const envelope = parsed && typeof parsed === 'object' ? parsed.error : null;
  if (envelope && typeof envelope.message === 'string') {
    return new ApiError(envelope.message, {
      status,
      type: envelope.type ?? null,
      code: envelope.code ?? null,
      param: envelope.param ?? null,
    });
  }
  return new ApiError(`The gateway answered ${status}${text ? `: ${text.slice(0, 200)}` : ''}`, { status });
}

/** A query string from an object, leaving out empty values. */
export function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== '') search.set(name, value);
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}
