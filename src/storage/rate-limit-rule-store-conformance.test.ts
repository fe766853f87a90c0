import { describe, expect, it } from 'vitest';
import type { RateLimitRuleRow, RateLimitScope } from '../ratelimit/rule-store.ts';
import { postgresMigrations } from './postgres/migrations.ts';
import { sqliteMigrations } from './sqlite/migrations.ts';
import { baseTime, useFreshStorage } from './testing/fixtures.ts';
import { defaultTestDatabaseUrl, storageBackends } from './testing/storage-backends.ts';

const backends = storageBackends(process.env.DATABASE_URL_TEST ?? defaultTestDatabaseUrl);
const migrationsByBackend = { sqlite: sqliteMigrations, postgresql: postgresMigrations };
const rulesVersion = 4;

function rule(scope: RateLimitScope, subject: string, overrides: Partial<RateLimitRuleRow> = {}): RateLimitRuleRow {
  return {
    scope,
    subject,
    periodSeconds: 60,
    maxRequests: 100,
    maxTokens: 50_000,
    createdAt: baseTime,
    updatedAt: baseTime,
    ...overrides,
  };
}

describe.each(backends)('RateLimitRuleStore conformance: $name', (backend) => {
  const fresh = useFreshStorage(backend);

  it('lists nothing when there are no rules', async () => {
    expect(await fresh().storage.rateLimitRules.list()).toEqual([]);
  });

  it('round-trips rules exactly, with NULL caps and large values', async () => {
    const { rateLimitRules } = fresh().storage;
    const requestsOnly = rule('user_path', '/Team/App', { maxTokens: null, updatedAt: baseTime + 1 });
    const tokensOnly = rule('provider', 'openai', { periodSeconds: 3_600, maxRequests: null, maxTokens: 9_007_199_254_740_991 });
    const concurrency = rule('model', 'gpt-4o', { periodSeconds: 0, maxRequests: 8, maxTokens: null, createdAt: 4_102_444_800_123 });
    for (const row of [requestsOnly, tokensOnly, concurrency]) await rateLimitRules.upsert(row);
    expect(await rateLimitRules.list()).toEqual([concurrency, tokensOnly, requestsOnly]);
  });

  it('identifies a rule by its subject case-insensitively, keeps createdAt and stores the latest spelling', async () => {
    const { rateLimitRules } = fresh().storage;
    await rateLimitRules.upsert(rule('user_path', '/Team', { maxRequests: 10, maxTokens: 1_000 }));
    const replacement = rule('user_path', '/team', {
      maxRequests: 20,
      maxTokens: null,
      createdAt: baseTime + 500,
      updatedAt: baseTime + 500,
    });
    await rateLimitRules.upsert(replacement);
    expect(await rateLimitRules.list()).toEqual([{ ...replacement, createdAt: baseTime }]);
  });

  it('can set both caps back to NULL', async () => {
    const { rateLimitRules } = fresh().storage;
    await rateLimitRules.upsert(rule('model', 'gpt-4o'));
    await rateLimitRules.upsert(rule('model', 'gpt-4o', { maxRequests: null, maxTokens: null, updatedAt: baseTime + 9 }));
    expect(await rateLimitRules.list()).toEqual([rule('model', 'gpt-4o', { maxRequests: null, maxTokens: null, updatedAt: baseTime + 9 })]);
  });

  it('treats the same subject in another scope or period as another rule', async () => {
    const { rateLimitRules } = fresh().storage;
    const rows = [
      rule('provider', 'shared'),
      rule('model', 'shared'),
      rule('model', 'shared', { periodSeconds: 3_600 }),
      rule('model', 'shared', { periodSeconds: 0 }),
    ];
    for (const row of rows) await rateLimitRules.upsert(row);
    expect(await rateLimitRules.list()).toHaveLength(4);
  });

  it('remove is case-insensitive on the subject and reports whether a rule was there', async () => {
    const { rateLimitRules } = fresh().storage;
    await rateLimitRules.upsert(rule('user_path', '/Team/App'));
    await rateLimitRules.upsert(rule('user_path', '/team/app', { periodSeconds: 3_600 }));
    await rateLimitRules.upsert(rule('model', '/team/app'));
    expect(await rateLimitRules.remove('user_path', '/TEAM/app', 60)).toBe(true);
    expect(await rateLimitRules.remove('user_path', '/team/app', 60)).toBe(false);
    expect(await rateLimitRules.remove('provider', '/team/app', 3_600)).toBe(false);
    expect(await rateLimitRules.remove('user_path', '/nobody', 3_600)).toBe(false);
    expect((await rateLimitRules.list()).map(({ scope, periodSeconds }) => [scope, periodSeconds])).toEqual([
      ['model', 60],
      ['user_path', 3_600],
    ]);
  });

  it('lists by scope, then lower-cased subject in byte order, then period', async () => {
    const { rateLimitRules } = fresh().storage;
    const subjects = ['/Zeta', '/alpha', '/a_b', '/a-b', '/a.b', '/ab'];
    for (const subject of subjects) await rateLimitRules.upsert(rule('user_path', subject));
    await rateLimitRules.upsert(rule('user_path', '/alpha', { periodSeconds: 0 }));
    await rateLimitRules.upsert(rule('user_path', '/alpha', { periodSeconds: 3_600 }));
    await rateLimitRules.upsert(rule('provider', 'zeta'));
    await rateLimitRules.upsert(rule('model', 'zeta'));
    expect((await rateLimitRules.list()).map(({ scope, subject, periodSeconds }) => `${scope} ${subject} ${periodSeconds}`)).toEqual([
      'model zeta 60',
      'provider zeta 60',
      'user_path /a-b 60',
      'user_path /a.b 60',
      'user_path /a_b 60',
      'user_path /ab 60',
      'user_path /alpha 0',
      'user_path /alpha 60',
      'user_path /alpha 3600',
      'user_path /Zeta 60',
    ]);
  });

  it('a database created before rate-limit rules gains them on reopen', async () => {
    const shipped = migrationsByBackend[backend.name];
    const location = await backend.createLocation();
    try {
      const older = shipped.filter((migration) => migration.version < rulesVersion);
      expect(await location.migrate(older)).toEqual(older.map((migration) => migration.version));
      const storage = await location.open();
      try {
        expect(await location.appliedMigrations()).toEqual(shipped.map(({ version, name }) => ({ version, name })));
        expect(await location.appliedMigrations()).toContainEqual({ version: rulesVersion, name: 'rate_limit_rules' });
        await storage.rateLimitRules.upsert(rule('provider', 'openai'));
        expect(await storage.rateLimitRules.list()).toEqual([rule('provider', 'openai')]);
      } finally {
        await storage.close();
      }
    } finally {
      await location.dispose();
    }
  });
});
