import { periodSecondsOf } from '../ratelimit/periods.ts';
import { RuleValidationError, ruleId, validateRule, type RateLimitScope, type RuleDraft } from '../ratelimit/rules.ts';
import { ConfigError } from '../errors/config-error.ts';
import { configUserPath, pathVariables } from './env-paths.ts';
import { numericValue } from './values.ts';

type Env = Readonly<Record<string, string | undefined>>;
/** `SET_RATE_LIMIT_<PATH>` and `SET_PROVIDER_RATE_LIMIT_<NAME>`: the limits of one user path, of one provider instance. */
export const rateLimitVariablePrefix = 'SET_RATE_LIMIT_';
export const providerRateLimitVariablePrefix = 'SET_PROVIDER_RATE_LIMIT_';

type Limits = Map<number, { maxRequests: number | null; maxTokens: number | null }>;

const compactNames: Readonly<Record<string, [period: number, cap: 'maxRequests' | 'maxTokens']>> = {
  rpm: [60, 'maxRequests'],
  tpm: [60, 'maxTokens'],
  rph: [3600, 'maxRequests'],
  tph: [3600, 'maxTokens'],
  rpd: [86_400, 'maxRequests'],
  tpd: [86_400, 'maxTokens'],
  concurrent: [0, 'maxRequests'],
  concurrency: [0, 'maxRequests'],
};

interface Entry {
  scope: RateLimitScope;
  subject: string;
  key: string;
  limits: Limits;
}

/**
 * Rate-limit rules from YAML `rate_limits` (`user_paths`, `providers`, `models`),
 * `SET_RATE_LIMIT_<PATH>` and `SET_PROVIDER_RATE_LIMIT_<NAME>`. A variable replaces the YAML
 * entry of the same path or provider. Values: `rpm=100,tpm=50000,rpd=1000,concurrent=10` or
 * a JSON array of `{period | period_seconds, max_requests?, max_tokens?}`.
 */
export function buildRateLimitRules(section: Record<string, unknown>, env: Env): RuleDraft[] {
  const entries = new Map<string, Entry>();
  const add = (entry: Entry): void => void entries.set(`${entry.scope}|${entry.subject.toLowerCase()}`, entry);
  listOf(section['user_paths'], 'rate_limits.user_paths').forEach(([item, key]) => {
    add({
      scope: 'user_path',
      subject: configUserPath(`${key}.path`, requireString(item['path'], `${key}.path`)),
      key,
      limits: yamlLimits(item['limits'], `${key}.limits`),
    });
  });
  listOf(section['providers'], 'rate_limits.providers').forEach(([item, key]) => {
    add({
      scope: 'provider',
      subject: requireString(item['name'], `${key}.name`),
      key,
      limits: yamlLimits(item['limits'], `${key}.limits`),
    });
  });
  listOf(section['models'], 'rate_limits.models').forEach(([item, key]) => {
    add({
      scope: 'model',
      subject: requireString(item['model'], `${key}.model`),
      key,
      limits: yamlLimits(item['limits'], `${key}.limits`),
    });
  });
  for (const [variable, path, value] of pathVariables(env, rateLimitVariablePrefix)) {
    add({ scope: 'user_path', subject: path, key: variable, limits: envLimits(variable, value) });
  }
  for (const [variable, value] of providerVariables(env)) {
    const subject = variable.slice(providerRateLimitVariablePrefix.length).toLowerCase().replaceAll('_', '-');
    if (subject === '') throw new ConfigError(variable, 'name the provider instance after the prefix');
    add({ scope: 'provider', subject, key: variable, limits: envLimits(variable, value) });
  }
  return toRules([...entries.values()]);
}

function toRules(entries: Entry[]): RuleDraft[] {
  const seen = new Set<string>();
  const rules: RuleDraft[] = [];
  for (const entry of entries) {
    for (const [periodSeconds, caps] of entry.limits) {
      let rule: RuleDraft;
      try {
        rule = validateRule({ scope: entry.scope, subject: entry.subject, periodSeconds, ...caps });
      } catch (error) {
        if (error instanceof RuleValidationError) throw new ConfigError(entry.key, error.message);
        throw error;
      }
      const id = ruleId(rule.scope, rule.subject, rule.periodSeconds);
      if (seen.has(id))
        throw new ConfigError(entry.key, `duplicate rate limit for ${rule.scope} ${rule.subject} period ${rule.periodSeconds}s`);
      seen.add(id);
      rules.push(rule);
    }
  }
  return rules;
}

function yamlLimits(value: unknown, key: string): Limits {
  const limits: Limits = new Map();
  listOf(value, key).forEach(([item, itemKey]) => {
    const periodSeconds = periodOf(item, itemKey);
    if (limits.has(periodSeconds)) throw new ConfigError(itemKey, `duplicate period (${periodSeconds}s) for the same subject`);
    limits.set(periodSeconds, {
      maxRequests: capOf(item['max_requests'], `${itemKey}.max_requests`),
      maxTokens: capOf(item['max_tokens'], `${itemKey}.max_tokens`),
    });
  });
  if (limits.size === 0) throw new ConfigError(key, 'expected at least one limit');
  return limits;
}

function envLimits(variable: string, value: string): Limits {
  if (value.startsWith('[')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      throw new ConfigError(variable, 'not valid JSON');
    }
    return yamlLimits(parsed, variable);
  }
  const limits: Limits = new Map();
  for (const pair of value
    .split(/[,;\n]/)
    .map((part) => part.trim())
    .filter((part) => part !== '')) {
    const [name = '', raw = ''] = pair.split(/[=:]/).map((part) => part.trim());
    const known = compactNames[name.toLowerCase()];
    if (known === undefined) throw new ConfigError(variable, `"${name}" must be one of rpm, tpm, rph, tph, rpd, tpd, concurrent`);
    const [periodSeconds, cap] = known;
    const current = limits.get(periodSeconds) ?? { maxRequests: null, maxTokens: null };
    limits.set(periodSeconds, { ...current, [cap]: capOf(/^\d+$/.test(raw) ? Number(raw) : raw, variable) });
  }
  return limits;
}

function periodOf(item: Record<string, unknown>, key: string): number {
  const seconds = numericValue(item['period_seconds']);
  if (seconds !== undefined) {
    if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < 0)
      throw new ConfigError(`${key}.period_seconds`, 'expected 0 (concurrent) or a positive integer');
    return seconds;
  }
  const period = typeof item['period'] === 'string' ? periodSecondsOf(item['period']) : null;
  if (period === null)
    throw new ConfigError(`${key}.period`, 'period must be one of minute, hour, day, concurrent or period_seconds must be set');
  return period;
}

function capOf(raw: unknown, key: string): number | null {
  const value = numericValue(raw);
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0)
    throw new ConfigError(key, `expected an integer greater than 0, got ${JSON.stringify(value)}`);
  return value;
}

function listOf(value: unknown, key: string): Array<[Record<string, unknown>, string]> {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new ConfigError(key, 'expected a list');
  return value.map((item: unknown, index) => {
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new ConfigError(`${key}.${index}`, 'expected a mapping');
    const allowed = new Set(['path', 'name', 'model', 'limits', 'period', 'period_seconds', 'max_requests', 'max_tokens']);
    const unknown = Object.keys(item).find((field) => !allowed.has(field));
    if (unknown !== undefined) throw new ConfigError(`${key}.${index}.${unknown}`, 'unknown field');
    return [item as Record<string, unknown>, `${key}.${index}`];
  });
}

function requireString(value: unknown, key: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new ConfigError(key, 'is required');
  return value;
}

function providerVariables(env: Env): Array<[string, string]> {
  return Object.keys(env)
    .filter((name) => name.startsWith(providerRateLimitVariablePrefix) && (env[name] ?? '').trim() !== '')
    .sort()
    .map((name) => [name, (env[name] ?? '').trim()]);
}
