import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError } from '../errors/config-error.ts';
import { loadSettings } from './load.ts';
import { thrown } from '../testing/thrown.ts';

const workspace = (yaml?: string): string => {
  const directory = mkdtempSync(join(tmpdir(), 'config-test-'));
  if (yaml !== undefined) writeFileSync(join(directory, 'config.yaml'), yaml);
  return directory;
};

const load = (env: Record<string, string> = {}, yaml?: string, argv: string[] = []) => loadSettings({ argv, env, cwd: workspace(yaml) });

describe('loadSettings', () => {
  it('has the documented defaults and binds loopback in open mode', () => {
    const { settings } = load();
    expect(settings.server).toMatchObject({ port: 8080, host: '127.0.0.1', masterKey: null, bodySizeLimit: 10 * 1024 * 1024 });
    expect(settings.server.userPathHeader).toBe('x-user-path');
    expect(settings.providers).toEqual([]);
    expect(Object.isFrozen(settings.server)).toBe(true);
  });

  it('binds all interfaces with a master key unless HOST is set', () => {
    expect(load({ MASTER_KEY: 'm' }).settings.server.host).toBe('0.0.0.0');
    expect(load({ MASTER_KEY: 'm', HOST: '127.0.0.2' }).settings.server.host).toBe('127.0.0.2');
  });

  it('reads ALLOW_OPEN_NETWORK (off by default) and refuses a value that is not a boolean', () => {
    expect(load().settings.server.allowOpenNetwork).toBe(false);
    expect(load({ ALLOW_OPEN_NETWORK: 'true' }).settings.server.allowOpenNetwork).toBe(true);
    expect(() => load({ ALLOW_OPEN_NETWORK: 'yes please' })).toThrow(/ALLOW_OPEN_NETWORK/);
  });

  it('reads ./config.yaml, expands variables and lets the environment win', () => {
    const yaml = [
      'server:',
      '  port: ${GW_PORT:-9000}',
      '  master_key: ${GW_KEY}',
      'providers:',
      '  main:',
      '    type: openai-compatible',
      '    base_url: http://127.0.0.1:1234/v1/',
      '    api_key: ${UPSTREAM_KEY:-none}',
      '    models: [a, {id: b}]',
    ].join('\n');
    const { settings } = load({ GW_KEY: 'from-env' }, yaml);
    expect(settings.server.port).toBe(9000);
    expect(settings.server.masterKey).toBe('from-env');
    expect(settings.providers).toEqual([
      { name: 'main', type: 'openai-compatible', apiKey: 'none', baseUrl: 'http://127.0.0.1:1234/v1', models: ['a', 'b'], options: {} },
    ]);
    expect(load({ PORT: '7000' }, yaml).settings.server.port).toBe(7000);
  });

  it('registers providers from <TYPE>_API_KEY and <TYPE>_<SUFFIX>_API_KEY', () => {
    const { settings } = load({
      OPENAI_API_KEY: 'k1',
      OPENAI_EAST_API_KEY: 'k2',
      OPENAI_EAST_BASE_URL: 'http://127.0.0.1:9/v1',
      OPENAI_EAST_MODELS: 'gpt-4o, gpt-4o-mini,',
      OPENAI_COMPATIBLE_BASE_URL: 'http://127.0.0.1:8/v1',
      GROQ_API_KEY: 'k3',
    });
    const byName = new Map(settings.providers.map((provider) => [provider.name, provider]));
    expect(byName.get('openai')).toMatchObject({ type: 'openai', apiKey: 'k1', baseUrl: 'https://api.openai.com/v1', models: null });
    expect(byName.get('openai-east')).toMatchObject({
      type: 'openai',
      baseUrl: 'http://127.0.0.1:9/v1',
      models: ['gpt-4o', 'gpt-4o-mini'],
    });
    expect(byName.get('openai-compatible')).toMatchObject({ type: 'openai-compatible', apiKey: null });
    expect(byName.get('groq')?.baseUrl).toBe('https://api.groq.com/openai/v1');
  });

  it('keeps YAML provider order first and lets env override a YAML instance', () => {
    const yaml = 'providers:\n  zeta:\n    type: openai\n    api_key: a\n  openai:\n    type: openai\n    api_key: yaml-key\n';
    const { settings } = load({ OPENAI_API_KEY: 'env-key', GROQ_API_KEY: 'g' }, yaml);
    expect(settings.providers.map((provider) => provider.name)).toEqual(['zeta', 'openai', 'groq']);
    expect(settings.providers[1]?.apiKey).toBe('env-key');
  });

  it('disables an env instance without its key, naming the variable, with a warning', () => {
    const { settings, warnings } = load({ OPENAI_BASE_URL: 'http://127.0.0.1:1/v1' });
    expect(settings.providers).toEqual([]);
    expect(settings.disabledProviders).toMatchObject([{ name: 'openai', setting: 'OPENAI_API_KEY' }]);
    expect(warnings.join('\n')).toMatch(/"openai" is disabled: .*OPENAI_API_KEY/);
  });

  it('disables a YAML instance whose api_key ${VAR} is unset, whatever its type, and names VAR', () => {
    const yaml = 'providers:\n  local:\n    type: openai-compatible\n    base_url: http://127.0.0.1:1/v1\n    api_key: ${LOCAL_KEY}\n';
    expect(load({}, yaml).settings.disabledProviders).toMatchObject([{ name: 'local', setting: 'LOCAL_KEY', models: null }]);
    expect(load({ LOCAL_KEY: 'k' }, yaml).settings.providers.map((provider) => provider.name)).toEqual(['local']);
    // An explicit default (even empty) is a choice, not a missing key.
    const optional = yaml.replace('${LOCAL_KEY}', '${LOCAL_KEY:-}');
    expect(load({}, optional).settings.providers.map((provider) => provider.name)).toEqual(['local']);
  });

  it('names the variable or key in every error', () => {
    expect(thrown(ConfigError, () => load({ PORT: 'abc' })).message).toContain('PORT');
    expect(thrown(ConfigError, () => load({ PORT: '70000' })).message).toMatch(/PORT.*0 to 65535/);
    expect(thrown(ConfigError, () => load({ BODY_SIZE_LIMIT: '10 parsecs' })).message).toContain('BODY_SIZE_LIMIT');
    expect(thrown(ConfigError, () => load({ LOG_LEVEL: 'loud' })).message).toContain('LOG_LEVEL');
    expect(thrown(ConfigError, () => load({}, 'server:\n  port: x\n')).message).toContain('server.port');
    expect(thrown(ConfigError, () => load({}, 'providers:\n  p:\n    type: nope\n')).message).toContain('providers.p.type');
    expect(thrown(ConfigError, () => load({}, 'providers:\n  p:\n    type: azure\n    api_key: k\n')).message).toContain(
      'providers.p.base_url',
    );
    expect(thrown(ConfigError, () => load({}, 'server: [1\n')).message).toContain('not valid YAML');
    expect(thrown(ConfigError, () => load({}, undefined, ['--config', '/nonexistent.yaml'])).message).toContain('--config');
    expect(thrown(ConfigError, () => load({ CONFIG_FILE: 'missing.yaml' })).message).toContain('CONFIG_FILE');
  });

  it('reads the request log settings: on, bodies off, 16 KiB bodies, 30 days by default', () => {
    expect(load().settings.requestLog).toEqual({ enabled: true, bodies: 'off', bodyMaxBytes: 16_384, retentionDays: 30 });
    const env = {
      REQUEST_LOG_ENABLED: 'false',
      REQUEST_LOG_BODIES: 'errors',
      REQUEST_LOG_BODY_MAX_BYTES: '1024',
      REQUEST_LOG_RETENTION_DAYS: '7',
    };
    expect(load(env).settings.requestLog).toEqual({ enabled: false, bodies: 'errors', bodyMaxBytes: 1024, retentionDays: 7 });
    expect(load({}, 'request_log:\n  bodies: all\n').settings.requestLog.bodies).toBe('all');
    expect(thrown(ConfigError, () => load({ REQUEST_LOG_BODIES: 'some' })).message).toContain('REQUEST_LOG_BODIES');
    expect(thrown(ConfigError, () => load({ REQUEST_LOG_RETENTION_DAYS: '0' })).message).toContain('REQUEST_LOG_RETENTION_DAYS');
  });

  it('parses body sizes in bytes, K and MB within 1KB..100MB', () => {
    expect(load({ BODY_SIZE_LIMIT: '2KB' }).settings.server.bodySizeLimit).toBe(2048);
    expect(load({ BODY_SIZE_LIMIT: '1048576' }).settings.server.bodySizeLimit).toBe(1048576);
    expect(thrown(ConfigError, () => load({ BODY_SIZE_LIMIT: '512' })).key).toBe('BODY_SIZE_LIMIT');
  });

  it('bounds buffered upstream answers at 64 MB unless UPSTREAM_MAX_RESPONSE_BYTES says otherwise (up to 512 MB)', () => {
    expect(load().settings.upstream.maxResponseBytes).toBe(64 * 1024 * 1024);
    expect(load({ UPSTREAM_MAX_RESPONSE_BYTES: '8MB' }).settings.upstream.maxResponseBytes).toBe(8 * 1024 * 1024);
    expect(thrown(ConfigError, () => load({ UPSTREAM_MAX_RESPONSE_BYTES: '1024MB' })).key).toBe('UPSTREAM_MAX_RESPONSE_BYTES');
  });

  it('bounds receiving a request: HEADERS_TIMEOUT_SECONDS within BODY_TIMEOUT_SECONDS', () => {
    expect(load().settings.server).toMatchObject({ headersTimeoutSeconds: 30, bodyTimeoutSeconds: 300 });
    expect(load({ HEADERS_TIMEOUT_SECONDS: '5', BODY_TIMEOUT_SECONDS: '60' }).settings.server).toMatchObject({
      headersTimeoutSeconds: 5,
      bodyTimeoutSeconds: 60,
    });
    expect(load({}, 'server:\n  headers_timeout_seconds: 90\n  body_timeout_seconds: 20\n').settings.server.headersTimeoutSeconds).toBe(20);
    expect(thrown(ConfigError, () => load({ BODY_TIMEOUT_SECONDS: '0' })).key).toBe('BODY_TIMEOUT_SECONDS');
  });

  it('warns about unknown top-level keys', () => {
    expect(load({}, 'surprise: 1\n').warnings).toContain('unknown configuration key "surprise" is ignored');
    expect(load({}, 'rate_limit:\n  enabled: true\n').warnings).toContain(
      'unknown configuration key "rate_limit" is ignored (did you mean "rate_limits"?)',
    );
  });

  it('warns about unknown keys inside a provider entry and other sections, and only about those', () => {
    const yaml = [
      'providers:',
      '  openai:',
      '    type: openai',
      '    api_key: sk-x',
      '    modles: [gpt-4o]',
      'server:',
      '  prot: 9000',
      'upstream:',
      '  retries: 2',
      'pricing:',
      '  gpt-4o: { input_per_mtok: 1, output_per_mtok: 2, output_per_mtk: 3 }',
      'mcp:',
      '  servers: { any: { url: "http://127.0.0.1:1/mcp" } }',
      '',
    ].join('\n');
    const { settings, warnings } = load({}, yaml);
    expect(warnings.filter((warning) => warning.startsWith('unknown configuration key')).sort()).toEqual([
      'unknown configuration key "pricing.gpt-4o.output_per_mtk" is ignored (did you mean "output_per_mtok"?)',
      'unknown configuration key "providers.openai.modles" is ignored (did you mean "models"?)',
      'unknown configuration key "server.prot" is ignored (did you mean "port"?)',
    ]);
    expect(settings.providers.find((provider) => provider.name === 'openai')?.models).toBeNull();
  });
});

describe('numbers from variables', () => {
  it('treats an empty number (unset ${VAR}, empty key) as not given, so the default applies', () => {
    expect(load({}, 'server:\n  port: ${GW_PORT}\n').settings.server.port).toBe(8080);
    expect(load({}, 'upstream:\n  retries:\n').settings.upstream.retries).toBe(1);
  });

  it('accepts ${VAR} numbers in rate limits and budgets', () => {
    const yaml = [
      'rate_limits:',
      '  user_paths:',
      '    - path: /team',
      '      limits: [{period: minute, max_requests: "${TEAM_RPM:-100}"}]',
      'budgets:',
      '  user_paths:',
      '    - {path: /team, period: daily, amount: "${TEAM_BUDGET:-5.5}"}',
    ].join('\n');
    const { settings } = load({ TEAM_RPM: '7' }, yaml);
    expect(settings.rateLimits.rules[0]?.maxRequests).toBe(7);
    expect(settings.budgets.rules[0]?.amount).toBe(5.5);
  });

  it('keeps rate-limit counters in memory by default; the redis store needs REDIS_URL', () => {
    expect(load().settings.rateLimits).toMatchObject({ store: 'memory', redisUrl: null, failMode: 'open', leaseTtlMs: 30_000 });
    expect(thrown(ConfigError, () => load({ RATE_LIMITS_STORE: 'redis' })).key).toBe('RATE_LIMITS_STORE');
    const shared = load({
      RATE_LIMITS_STORE: 'redis',
      REDIS_URL: 'redis://127.0.0.1:6379',
      RATE_LIMITS_FAIL_MODE: 'closed',
      RATE_LIMITS_LEASE_TTL_SECONDS: '5',
      RATE_LIMITS_REDIS_PREFIX: 'gw:{eu}:',
    }).settings.rateLimits;
    expect(shared).toMatchObject({ store: 'redis', redisUrl: 'redis://127.0.0.1:6379', failMode: 'closed', leaseTtlMs: 5000 });
    expect(shared.redisPrefix).toBe('gw:{eu}:');
    expect(thrown(ConfigError, () => load({ RATE_LIMITS_FAIL_MODE: 'maybe' })).key).toBe('RATE_LIMITS_FAIL_MODE');
    const yaml = 'rate_limits:\n  store: redis\n  fail_mode: closed\nredis:\n  url: redis://r:6379\n';
    expect(load({}, yaml).settings.rateLimits).toMatchObject({ store: 'redis', failMode: 'closed', redisUrl: 'redis://r:6379' });
  });

  it('re-reads state changed by other replicas every 2 s unless told otherwise', () => {
    expect(load().settings.reloadIntervalMs).toBe(2000);
    expect(load({ RELOAD_INTERVAL_SECONDS: '5' }).settings.reloadIntervalMs).toBe(5000);
    expect(thrown(ConfigError, () => load({ RELOAD_INTERVAL_SECONDS: '0' })).key).toBe('RELOAD_INTERVAL_SECONDS');
  });

  it('keeps stored responses 30 days unless RESPONSES_RETENTION_DAYS or responses.retention_days says otherwise', () => {
    expect(load().settings.responses.retentionDays).toBe(30);
    expect(load({}, 'responses:\n  retention_days: 7\n').settings.responses.retentionDays).toBe(7);
    expect(load({ RESPONSES_RETENTION_DAYS: '2' }, 'responses:\n  retention_days: 7\n').settings.responses.retentionDays).toBe(2);
    expect(thrown(ConfigError, () => load({ RESPONSES_RETENTION_DAYS: '0' })).message).toContain('RESPONSES_RETENTION_DAYS');
  });
});

describe('WORKERS', () => {
  it('defaults to 1, takes a number or auto (the available cores), in the environment or YAML', async () => {
    const { availableParallelism } = await import('node:os');
    expect(load().settings.server.workers).toBe(1);
    expect(load({ WORKERS: '3' }).settings.server.workers).toBe(3);
    expect(load({ WORKERS: 'auto' }).settings.server.workers).toBe(availableParallelism());
    expect(load({}, 'server:\n  workers: 2\n').settings.server.workers).toBe(2);
    expect(thrown(ConfigError, () => load({ WORKERS: '0' })).message).toContain('WORKERS');
    expect(thrown(ConfigError, () => load({ WORKERS: 'many' })).message).toContain('WORKERS');
  });
});
