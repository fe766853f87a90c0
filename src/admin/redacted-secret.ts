import { invalidRequest } from '../errors/gateway-error.ts';
import { isCredentialParameter } from '../observability/redact-url.ts';

/** What a view shows in place of a secret (MCP headers); sent back in an update, it means "keep the stored one". */
export const redacted = '***';

/** Where a stored secret goes, and the secret itself, as the update finds them. */
export interface StoredSecret {
  /** The stored destination (an MCP server's or webhook's URL); null when there is none. */
  readonly url: string | null;
  /** The stored value; undefined when nothing is stored under that name. */
  readonly value: string | undefined;
}

/**
 * The value an update stores for a secret field (ADR 30): a real value as sent; `***` the
 * stored secret, but only while the destination's origin (scheme, host, port) stays the same.
 * A redacted value with a new origin, or with nothing stored, answers 400 `secret_required`
 * naming the field: an admin-role key must never send a secret it cannot read to a URL it picks.
 */
export function keepRedactedSecret(field: string, value: string, newUrl: string | null, stored: StoredSecret): string {
  if (value !== redacted) return value;
  if (stored.value === undefined) {
    throw secretRequired(field, `${field} is redacted (***) but no value is stored to keep: send the real value`);
  }
  const origin = newUrl === null ? null : originOf(newUrl);
  if (origin === null || stored.url === null || origin !== originOf(stored.url)) {
    throw secretRequired(
      field,
      `${field} is redacted (***) but the destination's origin changed: a stored secret never follows a new destination; send the real value`,
    );
  }
  return stored.value;
}

function secretRequired(field: string, message: string) {
  return invalidRequest(message, { code: 'secret_required', param: field });
}

/** `scheme://host:port` (default ports dropped, host lower-cased); null for a text that is not a URL. */
function originOf(url: string): string | null {
  try {
    const origin = new URL(url).origin;
    return origin === 'null' ? null : origin;
  } catch {
    return null;
  }
}

/**
 * A destination URL as a view shows it: a password in its user info and the value of every
 * credential-like query parameter (`api_key`, `token`, ...) are `***`. Text that is not a URL
 * is shown as it is.
 */
export function redactUrlSecrets(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  if (!hasUrlSecret(parsed)) return url;
  if (parsed.password !== '') parsed.password = redacted;
  for (const name of [...new Set(parsed.searchParams.keys())]) {
    if (isCredentialParameter(name)) parsed.searchParams.set(name, redacted);
  }
  return parsed.toString();
}

/**
 * The URL an update stores: one sent back with `***` where the view redacted a secret keeps
 * the stored secret there, only while the origin is unchanged and the stored URL has that
 * secret (else 400 `secret_required`, param `url`).
 */
export function keepRedactedUrl(url: string | null, storedUrl: string | null): string | null {
  if (url === null || !url.includes(redacted)) return url;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  const redactedNames = [...new Set(parsed.searchParams.keys())].filter((name) => parsed.searchParams.get(name) === redacted);
  const passwordRedacted = parsed.password === encodeURIComponent(redacted) || parsed.password === redacted;
  if (!passwordRedacted && redactedNames.length === 0) return url;
  const stored = storedUrl === null ? null : urlOrNull(storedUrl);
  const missing = (): never => {
    throw secretRequired(
      'url',
      'url has a redacted (***) secret but the stored URL has none there, or its origin changed: send the real value',
    );
  };
  if (stored === null || stored.origin !== parsed.origin) return missing();
  if (passwordRedacted) {
    if (stored.password === '') return missing();
    parsed.password = stored.password;
  }
  for (const name of redactedNames) {
    const value = stored.searchParams.get(name);
    if (value === null) return missing();
    parsed.searchParams.set(name, value);
  }
  return parsed.toString();
}

function hasUrlSecret(url: URL): boolean {
  return url.password !== '' || [...url.searchParams.keys()].some((name) => isCredentialParameter(name));
}

function urlOrNull(text: string): URL | null {
  try {
    return new URL(text);
  } catch {
    return null;
  }
}
