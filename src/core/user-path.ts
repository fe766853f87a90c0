const maximumLength = 512;
// eslint-disable-next-line no-control-regex -- control characters are exactly what is refused
const forbiddenCharacters = /[\u0000-\u001f\u007f]/;

/** Why a user path was refused. */
export class InvalidUserPathError extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'InvalidUserPathError';
  }
}

/**
 * Normalises a user path (CONTRACT section 3): trim, leading `/`, empty segments and the
 * trailing `/` dropped, case kept. A `.` or `..` segment, a `:` or a control character is
 * refused.
 */
export function normalizeUserPath(raw: string): string {
  const trimmed = raw.trim();
  if (trimmed.length > maximumLength) throw new InvalidUserPathError(`it is longer than ${maximumLength} characters`);
  if (forbiddenCharacters.test(trimmed)) throw new InvalidUserPathError('it contains a control character');
  const segments = trimmed.split('/').filter((segment) => segment !== '');
  for (const segment of segments) {
    if (segment === '.' || segment === '..') throw new InvalidUserPathError(`"${segment}" segments are not allowed`);
    if (segment.includes(':')) throw new InvalidUserPathError('":" is not allowed');
  }
  return `/${segments.join('/')}`;
}

/**
 * Whether a rule on `rulePath` covers `requestPath` (both normalised): the path itself and
 * its descendants, case-insensitively. `/team` covers `/team/app`, not `/team-alpha`; `/`
 * covers everything.
 */
export function userPathCovers(rulePath: string, requestPath: string): boolean {
  const rule = rulePath.toLowerCase();
  if (rule === '/') return true;
  const request = requestPath.toLowerCase();
  return request === rule || (request.startsWith(rule) && request.charCodeAt(rule.length) === 47);
}
