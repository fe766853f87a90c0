import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/gateway-error.ts';
import type { RateLimitCounterStore } from './counter-store.ts';
import { counterStoreKinds, type CounterStoreKind } from './testing/counter-stores.ts';
import { MemoryCounterStore } from './memory-counter-store.ts';
import { RateLimiter } from './rate-limiter.ts';
import type { RateLimitRuleRow, RateLimitRuleStore, RateLimitScope } from './rule-store.ts';
import type { RuleDraft } from './rules.ts';
import { rejected } from '../testing/thrown.ts';

class MemoryRules implements RateLimitRuleStore {
  rows: RateLimitRuleRow[] = [];
  async list() {
    return [...this.rows];
  }
  async upsert(row: RateLimitRuleRow) {
    this.rows = [...this.rows.filter((item) => !same(item, row.scope, row.subject, row.periodSeconds)), row];
  }
  async remove(scope: RateLimitScope, subject: string, periodSeconds: number) {
    const before = this.rows.length;
    this.rows = this.rows.filter((item) => !same(item, scope, subject, periodSeconds));
    return this.rows.length < before;
  }
}
const same = (row: RateLimitRuleRow, scope: string, subject: string, period: number) =>
  row.scope === scope && row.subject.toLowerCase() === subject.toLowerCase() && row.periodSeconds === period;

const t0 = 1_000_000_200; // window-aligned, in seconds
const draft = (
  scope: RateLimitScope,
  subject: string,
  periodSeconds: number,
  maxRequests: number | null,
  maxTokens: number | null = null,
): RuleDraft => ({
  scope,
  subject,
  periodSeconds,
  maxRequests,
  maxTokens,
});

// The same behaviour with every counter store: this process's memory, Redis (shared by
// replicas), and Redis behind the fail-open policy. Redis runs at 127.0.0.1:6379.
async function limiterOn(store: RateLimitCounterStore, rules: RuleDraft[], options: { enforceTokens?: boolean } = {}) {
  const clock = { seconds: t0 };
  const limiter = new RateLimiter({
    counters: store,
    ruleStore: new MemoryRules(),
    configRules: rules,
    enforceTokens: options.enforceTokens ?? true,
    logger: pino({ level: 'silent' }),
    now: () => clock.seconds * 1000,
  });
  await limiter.start();
  return { limiter, clock };
}

const path = (userPath: string) => ({ userPath });

afterAll(async () => {
  for (const kind of counterStoreKinds) await kind.dispose();
});

describe.each(counterStoreKinds.map((kind): [string, CounterStoreKind] => [kind.name, kind]))(
  'RateLimiter (%s counters)',
  (_name, kind) => {
    const limiterWith = async (rules: RuleDraft[], options: { enforceTokens?: boolean } = {}) =>
      limiterOn(await kind.create(), rules, options);
    it('shares one counter per rule across the subtree and rejects with the CONTRACT envelope', async () => {
      const { limiter } = await limiterWith([draft('user_path', '/team', 60, 2)]);
      await limiter.admit(path('/team/alice'));
      await limiter.admit(path('/team/bob'));
      const error = await rejected(GatewayError, limiter.admit(path('/team/carol')));
      expect([error.status, error.type, error.code, error.param, error.provider]).toEqual([
        429,
        'rate_limit_error',
        'rate_limit_exceeded',
        null,
        'ratelimit',
      ]);
      expect(error.message).toBe('rate limit exceeded for /team: minute request limit of 2 reached');
      const retryAfter = Number(error.headers['Retry-After']);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(120);
      expect(error.headers['x-ratelimit-remaining-requests']).toBe('0');
      expect(error.headers['x-ratelimit-limit-requests']).toBe('2');
      await limiter.admit(path('/team-alpha'));
      await limiter.admit(path('/other'));
    });

    it('matches paths case-insensitively', async () => {
      const { limiter } = await limiterWith([draft('user_path', '/Team', 60, 1)]);
      await limiter.admit(path('/team/x'));
      await rejected(GatewayError, limiter.admit(path('/TEAM/y')));
    });

    it('hot reload of configuration rules: kept rules keep counters and held slots, removed ones lose them', async () => {
      const { limiter } = await limiterWith([
        draft('user_path', '/kept', 60, 3),
        draft('user_path', '/gone', 60, 1),
        draft('user_path', '/c', 0, 1),
      ]);
      await limiter.admit(path('/kept'));
      await limiter.admit(path('/kept'));
      await limiter.admit(path('/gone'));
      const held = await limiter.admit(path('/c'));
      await limiter.applyConfigRules([
        draft('user_path', '/kept', 60, 2),
        draft('user_path', '/c', 0, 1),
        draft('user_path', '/new', 60, 1),
      ]);
      await rejected(GatewayError, limiter.admit(path('/kept')));
      await limiter.admit(path('/gone'));
      await limiter.admit(path('/gone'));
      await rejected(GatewayError, limiter.admit(path('/c')));
      held.release();
      await limiter.idle();
      await limiter.admit(path('/c'));
      await limiter.admit(path('/new'));
      await rejected(GatewayError, limiter.admit(path('/new')));
      await limiter.applyConfigRules([draft('user_path', '/gone', 60, 1)]);
      await limiter.admit(path('/gone'));
      await rejected(GatewayError, limiter.admit(path('/gone')));
      expect((await limiter.list()).map(({ rule }) => rule.subject)).toEqual(['/gone']);
    });

    it('gives an exact Retry-After: a retry one second early fails, at Retry-After it passes', async () => {
      const { limiter, clock } = await limiterWith([draft('user_path', '/', 60, 10)]);
      for (let index = 0; index < 10; index += 1) await limiter.admit(path('/'));
      const error = await rejected(GatewayError, limiter.admit(path('/')));
      expect(error.headers['Retry-After']).toBe('61');
      expect(error.headers['retry-after-ms']).toBe('61000');
      clock.seconds = t0 + 60;
      await rejected(GatewayError, limiter.admit(path('/')));
      clock.seconds = t0 + 61;
      await limiter.admit(path('/'));
      await rejected(GatewayError, limiter.admit(path('/')));
      clock.seconds = t0 + 180;
      for (let index = 0; index < 10; index += 1) await limiter.admit(path('/'));
    });

    it('post-accounts tokens: recording 30 against 10/min gives Retry-After 101 s', async () => {
      const { limiter, clock } = await limiterWith([draft('user_path', '/', 60, null, 10)]);
      await limiter.admit(path('/a'));
      limiter.recordTokens(path('/a'), 30);
      await limiter.idle();
      const error = await rejected(GatewayError, limiter.admit(path('/a')));
      expect(error.message).toContain('minute token limit of 10');
      expect(error.headers['Retry-After']).toBe('101');
      expect(error.headers['x-ratelimit-remaining-tokens']).toBe('0');
      clock.seconds = t0 + 100;
      await rejected(GatewayError, limiter.admit(path('/a')));
      clock.seconds = t0 + 101;
      await limiter.admit(path('/a'));
    });

    it('does not enforce token caps when usage tracking is off', async () => {
      const { limiter } = await limiterWith([draft('user_path', '/', 60, null, 10)], { enforceTokens: false });
      limiter.recordTokens(path('/'), 1000);
      await limiter.admit(path('/'));
    });

    it('reports the rule that blocks longest when several are exhausted', async () => {
      const { limiter } = await limiterWith([draft('user_path', '/', 60, 1), draft('user_path', '/', 86400, 1)]);
      await limiter.admit(path('/'));
      const error = await rejected(GatewayError, limiter.admit(path('/')));
      expect(error.message).toContain('day request limit');
      expect(Number(error.headers['Retry-After'])).toBeGreaterThan(60);
    });

    it('holds concurrency slots until released, once; a rejected admission counts nothing', async () => {
      const { limiter } = await limiterWith([draft('user_path', '/', 0, 1), draft('user_path', '/', 60, 100)]);
      const first = await limiter.admit(path('/'));
      const error = await rejected(GatewayError, limiter.admit(path('/')));
      expect(error.message).toBe('rate limit exceeded for /: concurrent request limit of 1 reached');
      expect(error.headers['Retry-After']).toBe('1');
      const [concurrent, minute] = await limiter.list();
      expect(concurrent?.counts.inFlight ?? minute?.counts.inFlight).toBeDefined();
      const minuteRule = (await limiter.list()).find((entry) => entry.rule.periodSeconds === 60);
      expect(minuteRule?.counts.requestsUsed).toBe(1);
      first.release();
      first.release();
      const second = await limiter.admit(path('/'));
      await rejected(GatewayError, limiter.admit(path('/')));
      second.release();
      await limiter.idle();
      const slots = (await limiter.list()).find((entry) => entry.rule.periodSeconds === 0);
      expect(slots?.counts.inFlight).toBe(0);
    });

    it('lets batch submissions count a request without holding a slot', async () => {
      const { limiter } = await limiterWith([draft('user_path', '/', 0, 1), draft('user_path', '/', 60, 2)]);
      await limiter.admit(path('/'), { holdSlot: false, routeRules: false });
      await limiter.admit(path('/'), { holdSlot: false, routeRules: false });
      await rejected(GatewayError, limiter.admit(path('/'), { holdSlot: false, routeRules: false }));
    });

    it('refunds an admission refused afterwards (budget): request count and slot come back', async () => {
      const { limiter } = await limiterWith([draft('user_path', '/', 60, 1), draft('user_path', '/', 0, 1)]);
      const admission = await limiter.admit(path('/'));
      admission.refund();
      await limiter.idle();
      await limiter.admit(path('/'));
    });

    it('sets success headers from the most constrained rule', async () => {
      const { limiter } = await limiterWith([draft('user_path', '/', 60, 100, 1000), draft('user_path', '/team', 60, 5)]);
      const admission = await limiter.admit(path('/team/alice'));
      expect(admission.headers).toEqual({
        'x-ratelimit-limit-requests': '5',
        'x-ratelimit-remaining-requests': '4',
        'x-ratelimit-reset-requests': '60',
        'x-ratelimit-limit-tokens': '1000',
        'x-ratelimit-remaining-tokens': '1000',
        'x-ratelimit-reset-tokens': '60',
      });
      expect((await limiter.admit(path('/elsewhere'))).headers['x-ratelimit-limit-requests']).toBe('100');
    });

    it('is unlimited, with no headers, when no rule matches', async () => {
      const { limiter } = await limiterWith([draft('user_path', '/team', 60, 1)]);
      expect((await limiter.admit(path('/other'))).headers).toEqual({});
    });

    it('matches provider rules by instance, case-insensitively, shared across models', async () => {
      const { limiter } = await limiterWith([draft('provider', 'OpenAI', 60, 1)]);
      await limiter.admit({ userPath: '/', provider: 'openai', model: 'gpt-4o' });
      const error = await rejected(GatewayError, limiter.admit({ userPath: '/', provider: 'OPENAI', model: 'gpt-4o-mini' }));
      expect(error.message).toContain('provider openai');
      await limiter.admit({ userPath: '/', provider: 'azure', model: 'gpt-4o' });
      await limiter.admit({ userPath: '/' }, { routeRules: false });
    });

    it('matches a bare model subject on every provider and a qualified one on its provider only', async () => {
      const { limiter } = await limiterWith([draft('model', 'gpt-4o', 60, 2), draft('model', 'openai/gpt-4o-mini', 60, 1)]);
      await limiter.admit({ userPath: '/', provider: 'openai', model: 'gpt-4o' });
      await limiter.admit({ userPath: '/', provider: 'azure', model: 'GPT-4o' });
      await rejected(GatewayError, limiter.admit({ userPath: '/', provider: 'azure', model: 'gpt-4o' }));
      await limiter.admit({ userPath: '/', provider: 'openai', model: 'gpt-4o-mini' });
      await rejected(GatewayError, limiter.admit({ userPath: '/', provider: 'openai', model: 'gpt-4o-mini' }));
      await limiter.admit({ userPath: '/', provider: 'azure', model: 'gpt-4o-mini' });
    });

    it('probes capacity without counting; user-path saturation never makes a target unavailable', async () => {
      const { limiter } = await limiterWith([draft('provider', 'openai', 60, 1), draft('user_path', '/', 60, 1)]);
      expect(await limiter.hasCapacity('openai', 'gpt-4o')).toBe(true);
      expect(await limiter.hasCapacity('openai', 'gpt-4o')).toBe(true);
      await limiter.admit({ userPath: '/', provider: 'openai', model: 'gpt-4o' });
      expect(await limiter.hasCapacity('openai', 'gpt-4o')).toBe(false);
      expect(await limiter.hasCapacity('azure', 'gpt-4o')).toBe(true);
    });

    it('charges tokens to the provider and model that executed', async () => {
      const { limiter } = await limiterWith([draft('model', 'gpt-4o', 60, null, 10)]);
      limiter.recordTokens({ userPath: '/', provider: 'openai', model: 'gpt-4o' }, 15);
      await limiter.idle();
      expect(await limiter.hasCapacity('openai', 'gpt-4o')).toBe(false);
      expect(await limiter.hasCapacity('openai', 'gpt-4o-mini')).toBe(true);
    });

    it('manages manual rules: caps edits keep counters, deletes and resets clear them, config is read-only', async () => {
      const { limiter } = await limiterWith([draft('user_path', '/config', 60, 1)]);
      await limiter.upsert(draft('user_path', '/team', 60, 2));
      await limiter.admit(path('/team'));
      await limiter.upsert(draft('user_path', '/TEAM', 60, 3));
      const edited = (await limiter.list()).find((entry) => entry.rule.subject.toLowerCase() === '/team');
      expect([edited?.rule.maxRequests, edited?.counts.requestsUsed]).toEqual([3, 1]);
      await limiter.resetOne('user_path', '/team', 60);
      expect((await limiter.list()).find((entry) => entry.rule.origin === 'manual')?.counts.requestsUsed).toBe(0);
      await limiter.admit(path('/team'));
      await limiter.remove('user_path', '/team', 60);
      await limiter.upsert(draft('user_path', '/team', 60, 3));
      expect((await limiter.list()).find((entry) => entry.rule.origin === 'manual')?.counts.requestsUsed).toBe(0);
      await expect(limiter.remove('user_path', '/team', 3600)).rejects.toMatchObject({ status: 404, code: 'rate_limit_not_found' });
      await expect(limiter.upsert(draft('user_path', '/config', 60, 9))).rejects.toMatchObject({ status: 409, code: 'rule_read_only' });
      await expect(limiter.remove('user_path', '/config', 60)).rejects.toMatchObject({ status: 409 });
      await limiter.admit(path('/config'));
      await rejected(GatewayError, limiter.admit(path('/config')));
      await limiter.resetAll();
      await limiter.admit(path('/config'));
    });
  },
);

describe('RateLimiter reload', () => {
  it('a reload asked for during another one reads the rules written meanwhile (an admin write through another worker)', async () => {
    const ruleStore = new MemoryRules();
    const limiter = new RateLimiter({
      counters: new MemoryCounterStore(),
      ruleStore,
      configRules: [],
      enforceTokens: true,
      logger: pino({ level: 'silent' }),
    });
    await limiter.start();
    const list = ruleStore.list.bind(ruleStore);
    let release = (): void => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    ruleStore.list = async () => {
      const rows = await list();
      await gate;
      return rows;
    };
    const periodic = limiter.reload();
    await new Promise((resolve) => setImmediate(resolve));
    const at = Date.now();
    await ruleStore.upsert({
      scope: 'user_path',
      subject: '/par',
      periodSeconds: 60,
      maxRequests: 1,
      maxTokens: null,
      createdAt: at,
      updatedAt: at,
    });
    const asked = limiter.reload();
    release();
    await Promise.all([periodic, asked]);
    expect((await limiter.list()).map(({ rule }) => rule.subject)).toEqual(['/par']);
  });
});
