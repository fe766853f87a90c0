import { ConfigError } from '../errors/config-error.ts';

/** Parsers for configuration values given as strings (environment variables). */

export function parseBoolean(key: string, raw: string): boolean {
  const value = raw.trim().toLowerCase();
  if (value === 'true' || value === '1' || value === 'yes' || value === 'on') return true;
  if (value === 'false' || value === '0' || value === 'no' || value === 'off') return false;
  throw new ConfigError(key, `expected true or false, got ${JSON.stringify(raw)}`);
}

export function parseInteger(key: string, raw: string | number, min: number, max: number): number {
  const value = typeof raw === 'number' ? raw : Number(raw.trim());
  if (!Number.isInteger(value) || (typeof raw === 'string' && raw.trim() === '')) {
    throw new ConfigError(key, `expected an integer, got ${JSON.stringify(raw)}`);
  }
  if (value < min || value > max) {
    throw new ConfigError(key, `expected an integer from ${min} to ${max}, got ${value}`);
  }
  return value;
}

const sizeUnits: Record<string, number> = {
  '': 1,
  B: 1,
  K: 1024,
  KB: 1024,
  M: 1024 ** 2,
  MB: 1024 ** 2,
  G: 1024 ** 3,
  GB: 1024 ** 3,
};

const minimumBodySize = 1024;
const maximumBodySize = 100 * 1024 ** 2;

/** Sizes such as `1048576`, `100K`, `10MB`; between 1 KB and `maximum` (100 MB by default). */
export function parseByteSize(key: string, raw: string | number, maximum = maximumBodySize): number {
  const match = /^\s*(\d+)\s*([A-Za-z]*)\s*$/.exec(String(raw));
  const unit = sizeUnits[(match?.[2] ?? '').toUpperCase()];
  if (!match || unit === undefined) {
    throw new ConfigError(key, `expected a size such as 1048576, 512K or 10MB, got ${JSON.stringify(raw)}`);
  }
  const bytes = Number(match[1]) * unit;
  if (bytes < minimumBodySize || bytes > maximum) {
    throw new ConfigError(key, `expected a size from 1KB to ${maximum / 1024 ** 2}MB, got ${JSON.stringify(raw)}`);
  }
  return bytes;
}

/** Replaces `${VAR}` and `${VAR:-default}` in every string of a parsed YAML document. */
export function expandVariables(value: unknown, env: Readonly<Record<string, string | undefined>>): unknown {
  if (typeof value === 'string') {
    return value.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_match, name: string, fallback?: string) => {
      const found = env[name];
      return found !== undefined && found !== '' ? found : (fallback ?? '');
    });
  }
  if (Array.isArray(value)) return value.map((item) => expandVariables(item, env));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, expandVariables(item, env)]));
  }
  return value;
}

export function deepFreeze<T>(value: T): T {
  if (typeof value === 'object' && value !== null && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const item of Object.values(value)) deepFreeze(item);
  }
  return value;
}

/** A number written as a string (after `${VAR}` expansion YAML values are strings) becomes a number. */
export function numericValue(value: unknown): unknown {
  return typeof value === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(value) ? Number(value) : value;
}
