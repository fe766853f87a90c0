import { invalidRequest } from '../errors/gateway-error.ts';

const maximumLength = 512;
// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const forbiddenCharacters = /[\u0000-\u001f\u007f]/;

/**
 * Normalises a user path (CONTRACT section 3): trim, leading `/`, empty segments and the
 * trailing `/` dropped. A `.` or `..` segment, a `:` or a control character is refused.
 */
export function normalizeUserPath(raw: string): string {
  const trimmed = raw.trim();
  if (trimmed.length > maximumLength) throw invalidUserPath(`it is longer than ${maximumLength} characters`);
  if (forbiddenCharacters.test(trimmed)) throw invalidUserPath('it contains a control character');
  const segments = trimmed.split('/').filter((segment) => segment !== '');
  for (const segment of segments) {
    if (segment === '.' || segment === '..') throw invalidUserPath(`"${segment}" segments are not allowed`);
    if (segment.includes(':')) throw invalidUserPath('":" is not allowed');
  }
  return `/${segments.join('/')}`;
}

/** The request's user path: the key's bound path always wins, then the header, then `/`. */
export function resolveUserPath(boundUserPath: string | null, header: string | string[] | undefined): string {
  if (boundUserPath !== null) return boundUserPath;
  const value = Array.isArray(header) ? header[0] : header;
  return value === undefined ? '/' : normalizeUserPath(value);
}

function invalidUserPath(reason: string) {
  return invalidRequest(`invalid user path header: ${reason}`, { code: 'invalid_user_path' });
}
