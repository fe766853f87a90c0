import { InvalidUserPathError, normalizeUserPath } from '../core/user-path.ts';
import { invalidRequest } from '../errors/gateway-error.ts';

/** The request's user path: the key's bound path always wins, then the header, then `/`. */
export function resolveUserPath(boundUserPath: string | null, header: string | string[] | undefined): string {
  if (boundUserPath !== null) return boundUserPath;
  const value = Array.isArray(header) ? header[0] : header;
  return value === undefined ? '/' : normalizeUserPathOrThrow(decodeHeaderUtf8(value));
}

// eslint-disable-next-line no-control-regex -- the ASCII range is the fast path
const asciiOnly = /^[\u0000-\u007f]*$/;

/**
 * A header value as the client sent it, UTF-8: Node hands header bytes over as latin1
 * characters (`/é` arrives as `/Ã©`). Bytes that are not valid UTF-8 are a 400
 * `invalid_user_path`, never a path that silently differs from the one the client meant.
 */
export function decodeHeaderUtf8(value: string, what = 'user path header'): string {
  if (asciiOnly.test(value)) return value;
  const bytes = Buffer.from(value, 'latin1');
  const decoded = bytes.toString('utf8');
  // Both ways round: every character was one byte, and the bytes were UTF-8 (no U+FFFD stand-in).
  if (bytes.toString('latin1') === value && Buffer.from(decoded, 'utf8').equals(bytes)) return decoded;
  throw invalidRequest(`invalid ${what}: it is not valid UTF-8`, { code: 'invalid_user_path' });
}

/** normalizeUserPath with the gateway's 400 `invalid_user_path` error. */
export function normalizeUserPathOrThrow(raw: string, what = 'user path header'): string {
  try {
    return normalizeUserPath(raw);
  } catch (error) {
    if (error instanceof InvalidUserPathError) throw invalidRequest(`invalid ${what}: ${error.message}`, { code: 'invalid_user_path' });
    throw error;
  }
}
