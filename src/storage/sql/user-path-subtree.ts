import type { SqlParameters } from './sql-executor.ts';

/**
 * The SQL condition "user_path_lower is `userPath` or one of its descendants", case-insensitive,
 * or null when the path is the root (everything matches).
 *
 * A byte-order range instead of LIKE, so that `_` and `%` in paths are plain characters and the
 * (user_path_lower, ts) index serves it: descendants of `/team` sort in [`/team/`, `/team0`) because
 * `0` is the character after `/`. `/team-alpha` is outside it. The column must compare in byte order
 * (SQLite BINARY; PostgreSQL COLLATE "C").
 */
export function userPathSubtreeCondition(userPath: string, parameters: SqlParameters, column = 'user_path_lower'): string | null {
  const path = userPath.toLowerCase().replace(/\/+$/, '');
  if (path === '') return null;
  const exact = parameters.add(path);
  const lowerBound = parameters.add(`${path}/`);
  const upperBound = parameters.add(`${path}0`);
  return `(${column} = ${exact} OR (${column} >= ${lowerBound} AND ${column} < ${upperBound}))`;
}
