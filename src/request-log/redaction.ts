/** What replaces a secret. */
export const redacted = '[REDACTED]';

/** Keys whose values are secrets: api_key, x-api-key, authorization, password, client_secret, id_token, ... (not max_tokens). */
const secretKey =
  /(api[-_]?key|apikey|authorization|auth|password|passwd|secret|token|credentials?|cookie|(private|access|secret)[-_]?key)$/i;

/** Bearer/Basic credentials and provider-style keys inside any text. */
const secretText = /\b(Bearer|Basic)\s+[A-Za-z0-9._~+/=-]{8,}|\b(sk|pk|rk)-[A-Za-z0-9_-]{16,}|\bAIza[A-Za-z0-9_-]{30,}/g;

/** Query parameters that carry credentials (Gemini's `key`, signed URLs, ...). */
const secretQueryParameter =
  /^(key|api[-_]?key|apikey|token|access[-_]?token|auth|sig|signature|password|secret|x-amz-signature|x-goog-signature)$/i;

function redactText(text: string): string {
  return text.replace(secretText, (match, scheme: string | undefined) => (scheme === undefined ? redacted : `${scheme} ${redacted}`));
}

/** A copy of a JSON value with secret-named keys and secret-looking strings replaced. */
export function redactValue(value: unknown): unknown {
  if (typeof value === 'string') return redactText(value);
  if (Array.isArray(value)) return value.map(redactValue);
  if (typeof value !== 'object' || value === null) return value;
  const copy: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) copy[key] = secretKey.test(key) && item !== null ? redacted : redactValue(item);
  return copy;
}

/**
 * A body as kept in the log: JSON (a parsed value, or text that parses) redacted key by key,
 * other text redacted by pattern; capped at `maxBytes` (UTF-8) with a truncation marker.
 * Raw bodies (passthrough) are kept when they are JSON; other binary bodies are not.
 */
export function keptBody(body: unknown, maxBytes: number): string | null {
  if (Buffer.isBuffer(body)) return isJsonBytes(body) ? keptBody(body.toString('utf8'), maxBytes) : null;
  if (body === undefined || body === null || body instanceof Uint8Array) return null;
  let text: string;
  if (typeof body === 'string') {
    text = redactJsonText(body);
  } else if (typeof body === 'object') {
    text = JSON.stringify(redactValue(body));
  } else {
    text = String(body);
  }
  return capBytes(text, maxBytes);
}

function isJsonBytes(bytes: Buffer): boolean {
  for (const byte of bytes) {
    if (byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09) continue;
    return byte === 0x7b || byte === 0x5b;
  }
  return false;
}

function redactJsonText(text: string): string {
  const first = text.trimStart()[0];
  if (first === '{' || first === '[') {
    try {
      return JSON.stringify(redactValue(JSON.parse(text)));
    } catch {
      // Not JSON after all: redacted by pattern below.
    }
  }
  return redactText(text);
}

/** At most `maxBytes` of UTF-8, cut on a character boundary, with what was left out said at the end. */
export function capBytes(text: string, maxBytes: number): string {
  const bytes = Buffer.byteLength(text);
  if (bytes <= maxBytes) return text;
  let cut = Buffer.from(text).subarray(0, maxBytes).toString('utf8');
  // A cut inside a multi-byte character decodes to U+FFFD: drop it.
  if (cut.endsWith('\uFFFD')) cut = cut.slice(0, -1);
  return `${cut}…[truncated ${bytes - Buffer.byteLength(cut)} bytes]`;
}

/** A URL or path with the values of credential query parameters replaced. */
export function redactUrl(url: string): string {
  const question = url.indexOf('?');
  if (question === -1) return url;
  const query = url
    .slice(question + 1)
    .split('&')
    .map((part) => {
      const equals = part.indexOf('=');
      const name = decodeURIComponentSafe(equals === -1 ? part : part.slice(0, equals));
      return equals !== -1 && secretQueryParameter.test(name) ? `${part.slice(0, equals)}=${redacted}` : part;
    });
  return `${url.slice(0, question)}?${query.join('&')}`;
}

function decodeURIComponentSafe(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
