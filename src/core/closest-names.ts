/**
 * "Did you mean ...": the known names closest to an unknown one, by edit distance, with bounded
 * work whatever the input: names are compared on their first `maxLength` characters, at most
 * `maxCandidates` names are looked at, and a distance is computed only within a band of
 * `maxDistance` (so each comparison costs at most maxLength x (2 maxDistance + 1) steps).
 */
export interface ClosestOptions {
  readonly maxDistance?: number;
  readonly maxResults?: number;
  readonly maxCandidates?: number;
  readonly maxLength?: number;
}

export function closestNames(name: string, known: Iterable<string>, options: ClosestOptions = {}): string[] {
  const maxLength = options.maxLength ?? 64;
  const maxCandidates = options.maxCandidates ?? 1000;
  const target = name.slice(0, maxLength).toLowerCase();
  // Two edits (a swapped pair of letters), or one in three characters for longer names: more and every name is "close".
  const maxDistance = Math.min(options.maxDistance ?? 3, Math.max(2, Math.floor(target.length / 3)));
  const found: Array<{ name: string; distance: number }> = [];
  let looked = 0;
  for (const candidate of known) {
    if (looked++ >= maxCandidates) break;
    if (candidate === name) continue;
    const distance = boundedDistance(target, candidate.slice(0, maxLength).toLowerCase(), maxDistance);
    if (distance <= maxDistance) found.push({ name: candidate, distance });
  }
  found.sort((left, right) => left.distance - right.distance || left.name.localeCompare(right.name));
  return [...new Set(found.map((entry) => entry.name))].slice(0, options.maxResults ?? 3);
}

/** The sentence appended to a message: ` (did you mean "a" or "b"?)`, or nothing. */
export function didYouMean(names: readonly string[]): string {
  if (names.length === 0) return '';
  return ` (did you mean ${names.map((entry) => JSON.stringify(entry)).join(' or ')}?)`;
}

/** Levenshtein distance of two strings, or `limit + 1` as soon as it is known to exceed `limit`. */
export function boundedDistance(left: string, right: string, limit: number): number {
  if (Math.abs(left.length - right.length) > limit) return limit + 1;
  let previous = Array.from({ length: right.length + 1 }, (_unused, index) => index);
  for (let row = 1; row <= left.length; row += 1) {
    const current = new Array<number>(right.length + 1).fill(limit + 1);
    current[0] = row;
    const from = Math.max(1, row - limit);
    const to = Math.min(right.length, row + limit);
    let best = from === 1 ? row : limit + 1;
    for (let column = from; column <= to; column += 1) {
      const substitution = (previous[column - 1] ?? limit + 1) + (left[row - 1] === right[column - 1] ? 0 : 1);
      const value = Math.min(substitution, (previous[column] ?? limit + 1) + 1, (current[column - 1] ?? limit + 1) + 1);
      current[column] = value;
      if (value < best) best = value;
    }
    if (best > limit) return limit + 1;
    previous = current;
  }
  return Math.min(previous[right.length] ?? limit + 1, limit + 1);
}
