import { InvalidUserPathError, normalizeUserPath } from '../core/user-path.ts';
import { ConfigError } from '../errors/config-error.ts';

/**
 * Maps a variable suffix to a user path (`SET_BUDGET_<SUFFIX>`, `SET_RATE_LIMIT_<SUFFIX>`):
 * lower case, `__` separates segments, a single `_` stays inside a segment, an empty suffix
 * is `/`. `TEAM__ALPHA` -> `/team/alpha`, `USER_1__APP` -> `/user_1/app`.
 */
export function suffixToUserPath(suffix: string): string {
  return normalizeUserPath(`/${suffix.toLowerCase().split('__').join('/')}`);
}

/** Variables `<prefix><SUFFIX>` with their user paths, in name order. */
export function pathVariables(
  env: Readonly<Record<string, string | undefined>>,
  prefix: string,
): Array<[variable: string, path: string, value: string]> {
  return Object.keys(env)
    .filter((name) => name.startsWith(prefix) && (env[name] ?? '').trim() !== '')
    .sort()
    .map((name) => [name, suffixToUserPath(name.slice(prefix.length)), (env[name] ?? '').trim()]);
}

/** A user path from configuration, or a ConfigError naming `key`. */
export function configUserPath(key: string, raw: string): string {
  try {
    return normalizeUserPath(raw);
  } catch (error) {
    if (error instanceof InvalidUserPathError) throw new ConfigError(key, `invalid user path ${JSON.stringify(raw)}: ${error.message}`);
    throw error;
  }
}
