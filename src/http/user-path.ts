import { InvalidUserPathError, normalizeUserPath } from '../core/user-path.ts';
import { invalidRequest } from '../errors/gateway-error.ts';

/** The request's user path: the key's bound path always wins, then the header, then `/`. */
export function resolveUserPath(boundUserPath: string | null, header: string | string[] | undefined): string {
  if (boundUserPath !== null) return boundUserPath;
  const value = Array.isArray(header) ? header[0] : header;
  return value === undefined ? '/' : normalizeUserPathOrThrow(value);
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
