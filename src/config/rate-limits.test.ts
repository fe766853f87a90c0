import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors/config-error.ts';
import { loadSettings } from './load.ts';
import { buildRateLimitRules } from './rate-limits.ts';
import { thrown } from '../testing/thrown.ts';

const rule = (scope: string, subject: string, periodSeconds: number, maxRequests: number | null, maxTokens: number | null) => ({
  scope,
  subject,
  periodSeconds,
  maxRequests,
  maxTokens,
});

describe('buildRateLimitRules', () => {
  it('reads SET_RATE_LIMIT_ compact pairs, merging caps of one period', () => {
    const rules = buildRateLimitRules({}, { SET_RATE_LIMIT_TEAM__ALPHA: 'rpm=100,tpm=50000,rpd=1000,concurrent=10' });
    expect(rules).toEqual([
      rule('user_path', '/team/alpha', 60, 100, 50000),
      rule('user_path', '/team/alpha', 86400, 1000, null),
      rule('user_path', '/team/alpha', 0, 10, null),
    ]);
  });

  it('reads SET_RATE_LIMIT_ (root) as a JSON array with a custom period', () => {
    expect(buildRateLimitRules({}, { SET_RATE_LIMIT_: '[{"period_seconds": 7200, "max_requests": 5}]' })).toEqual([
      rule('user_path', '/', 7200, 5, null),
    ]);
  });

  it('lets a variable replace the YAML entry of the same path or provider and keeps the others', () => {
    const yaml = {
      user_paths: [
        { path: '/team/alpha', limits: [{ period: 'hour', max_requests: 1 }] },
        { path: '/other', limits: [{ period: 'minute', max_requests: 2 }] },
      ],
      providers: [{ name: 'openai', limits: [{ period: 'minute', max_requests: 3 }] }],
      models: [{ model: 'OpenAI/GPT-4o', limits: [{ period: 'day', max_tokens: 9 }] }],
    };
    const rules = buildRateLimitRules(yaml, {
      SET_RATE_LIMIT_TEAM__ALPHA: 'rpm=7',
      SET_PROVIDER_RATE_LIMIT_OPENAI: 'concurrent=4',
      SET_PROVIDER_RATE_LIMIT_OPENAI_EAST: 'rph=8',
    });
    expect(rules).toEqual([
      rule('user_path', '/team/alpha', 60, 7, null),
      rule('user_path', '/other', 60, 2, null),
      rule('provider', 'openai', 0, 4, null),
      rule('model', 'openai/gpt-4o', 86400, null, 9),
      rule('provider', 'openai-east', 3600, 8, null),
    ]);
  });

  it('names the variable or key of every mistake', () => {
    expect(thrown(ConfigError, () => buildRateLimitRules({}, { SET_RATE_LIMIT_X: 'rps=5' })).message).toMatch(/SET_RATE_LIMIT_X.*"rps"/);
    expect(thrown(ConfigError, () => buildRateLimitRules({}, { SET_RATE_LIMIT_X: 'rpm=abc' })).key).toBe('SET_RATE_LIMIT_X');
    expect(thrown(ConfigError, () => buildRateLimitRules({}, { SET_RATE_LIMIT_X: '[{"period":"minute","max_requestz":1}]' })).key).toBe(
      'SET_RATE_LIMIT_X.0.max_requestz',
    );
    const limits = (limit: Record<string, unknown>) => ({ user_paths: [{ path: '/a', limits: [limit] }] });
    expect(
      thrown(ConfigError, () => buildRateLimitRules(limits({ period: 'concurrent', max_tokens: 5, max_requests: 1 }), {})).message,
    ).toContain('max_tokens is not valid');
    expect(thrown(ConfigError, () => buildRateLimitRules(limits({ period: 'concurrent' }), {})).message).toContain(
      'required for the concurrent period',
    );
    expect(thrown(ConfigError, () => buildRateLimitRules(limits({ period: 'minute' }), {})).message).toContain('at least one of');
    expect(thrown(ConfigError, () => buildRateLimitRules(limits({ period: 'fortnight', max_requests: 1 }), {})).key).toBe(
      'rate_limits.user_paths.0.limits.0.period',
    );
    expect(thrown(ConfigError, () => buildRateLimitRules(limits({ period: 'minute', max_requests: -1 }), {})).key).toBe(
      'rate_limits.user_paths.0.limits.0.max_requests',
    );
    const duplicate = {
      user_paths: [
        {
          path: '/a',
          limits: [
            { period: 'minute', max_requests: 1 },
            { period_seconds: 60, max_requests: 2 },
          ],
        },
      ],
    };
    expect(thrown(ConfigError, () => buildRateLimitRules(duplicate, {})).message).toContain('duplicate period');
    expect(
      thrown(ConfigError, () => buildRateLimitRules({ providers: [{ name: 'a/b', limits: [{ period: 'minute', max_requests: 1 }] }] }, {}))
        .message,
    ).toContain('without slashes');
    expect(thrown(ConfigError, () => buildRateLimitRules({ providers: [{ name: '', limits: [] }] }, {})).key).toBe(
      'rate_limits.providers.0.name',
    );
    expect(thrown(ConfigError, () => buildRateLimitRules({ models: [{ limits: [] }] }, {})).key).toBe('rate_limits.models.0.model');
    expect(thrown(ConfigError, () => buildRateLimitRules({ user_paths: [{ path: '/a/../b', limits: [] }] }, {})).key).toBe(
      'rate_limits.user_paths.0.path',
    );
  });
});

describe('rate limits in loadSettings', () => {
  const load = (env: Record<string, string>, yaml = '') => {
    const cwd = mkdtempSync(join(tmpdir(), 'rl-config-'));
    writeFileSync(join(cwd, 'config.yaml'), yaml);
    return loadSettings({ argv: [], env, cwd }).settings.rateLimits;
  };

  it('is enabled by default and reads YAML', () => {
    const settings = load(
      {},
      'rate_limits:\n  user_paths:\n    - path: /team\n      limits:\n        - {period: minute, max_requests: 5}\n',
    );
    expect(settings.enabled).toBe(true);
    expect(settings.rules).toEqual([rule('user_path', '/team', 60, 5, null)]);
  });

  it('ignores (and does not validate) declarations when RATE_LIMITS_ENABLED=false', () => {
    expect(load({ RATE_LIMITS_ENABLED: 'false', SET_RATE_LIMIT_X: 'rps=1' })).toMatchObject({ enabled: false, rules: [] });
  });
});
