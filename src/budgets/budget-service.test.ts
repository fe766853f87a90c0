import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { userPathCovers } from '../core/user-path.ts';
import { GatewayError } from '../errors/gateway-error.ts';
import type { BudgetRow, BudgetStore, SpendSlice } from './budget-store.ts';
import { BudgetService, type SharedBudgetStore } from './budget-service.ts';

/** A budget store whose "database" spend is a list of (path, cost, at) the test controls. */
class MemoryBudgets implements BudgetStore {
  rows: BudgetRow[] = [];
  spend: Array<{ path: string; cost: number; at: number }> = [];
  async list() {
    return [...this.rows];
  }
  async upsert(row: BudgetRow) {
    this.rows = [
      ...this.rows.filter((item) => item.userPath.toLowerCase() !== row.userPath.toLowerCase() || item.periodSeconds !== row.periodSeconds),
      row,
    ];
  }
  async remove(userPath: string, periodSeconds: number) {
    const before = this.rows.length;
    this.rows = this.rows.filter((item) => item.userPath.toLowerCase() !== userPath.toLowerCase() || item.periodSeconds !== periodSeconds);
    return this.rows.length < before;
  }
  /** Queries made, to check that shared refreshes stay incremental. */
  fullSums = 0;
  async spentSince(userPath: string, from: number, to = Number.POSITIVE_INFINITY) {
    this.fullSums += 1;
    return this.spend
      .filter((item) => item.at >= from && item.at < to && userPathCovers(userPath, item.path))
      .reduce((total, item) => total + item.cost, 0);
  }
  async spendBySecond(from: number) {
    const slices = new Map<string, SpendSlice>();
    for (const item of this.spend.filter((one) => one.at >= from)) {
      const slice = { userPath: item.path.toLowerCase(), second: Math.floor(item.at / 1000), cost: item.cost };
      const key = `${slice.userPath} ${slice.second}`;
      slices.set(key, { ...slice, cost: (slices.get(key)?.cost ?? 0) + slice.cost });
    }
    return [...slices.values()];
  }
}

interface SetupOptions {
  shared?: boolean;
  rules?: Array<{ userPath: string; periodSeconds: number; amount: number }>;
  sharedStore?: SharedBudgetStore;
}

const setup = async (options: SetupOptions = {}) => {
  const clock = { now: Date.parse('2026-11-21T10:00:00Z'), settled: 0 };
  const store = new MemoryBudgets();
  const service = new BudgetService({
    store,
    configRules: options.rules ?? [{ userPath: '/team', periodSeconds: 86400, amount: 1 }],
    whileSettled: (read) => read(clock.settled),
    sharedDatabase: options.shared ?? false,
    sharedStore: options.sharedStore ?? null,
    refreshIntervalMs: 60_000,
    logger: pino({ level: 'silent' }),
    now: () => clock.now,
  });
  await service.start();
  return { clock, store, service };
};

const rejection = (action: () => void): GatewayError => {
  try {
    action();
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a rejection');
};

describe('BudgetService', () => {
  it('admits until spend reaches the amount, then answers 429 budget_exceeded with Retry-After to the period end', async () => {
    const { service } = await setup();
    service.charge('/team/app', 0.6, 1, Date.parse('2026-11-21T10:00:00Z'));
    service.check('/team/app');
    service.charge('/team/other', 0.4, 2, Date.parse('2026-11-21T10:00:00Z'));
    const error = rejection(() => service.check('/team/app'));
    expect([error.status, error.type, error.code, error.provider]).toEqual([429, 'rate_limit_error', 'budget_exceeded', 'budget']);
    expect(error.headers['Retry-After']).toBe(String(14 * 3600));
    expect(error.message).toContain('/team');
    service.stop();
  });

  it('covers the path and its descendants, case-insensitively, and nothing else', async () => {
    const { service } = await setup();
    service.charge('/TEAM', 5, 1, Date.parse('2026-11-21T10:00:00Z'));
    expect(() => service.check('/team/x')).toThrow(GatewayError);
    expect(() => service.check('/team-alpha')).not.toThrow();
    expect(() => service.check('/')).not.toThrow();
    service.stop();
  });

  it('reads the period spend from the database at start and starts a new period at zero', async () => {
    const clock = { now: Date.parse('2026-11-21T10:00:00Z') };
    const store = new MemoryBudgets();
    store.spend.push({ path: '/team/a', cost: 1, at: Date.parse('2026-11-21T01:00:00Z') });
    const service = new BudgetService({
      store,
      configRules: [{ userPath: '/team', periodSeconds: 86400, amount: 1 }],
      whileSettled: (read) => read(0),
      sharedDatabase: false,
      refreshIntervalMs: 60_000,
      logger: pino({ level: 'silent' }),
      now: () => clock.now,
    });
    await service.start();
    expect(() => service.check('/team/a')).toThrow(GatewayError);
    clock.now = Date.parse('2026-11-22T00:00:01Z');
    expect(() => service.check('/team/a')).not.toThrow();
    service.stop();
  });

  it('does not count a charge twice once the database holds it (shared database refresh)', async () => {
    const { clock, store, service } = await setup({ shared: true });
    const at = clock.now;
    service.charge('/team', 0.5, 1, at);
    expect(service.statuses()[0]?.spent).toBeCloseTo(0.5);
    store.spend.push({ path: '/team', cost: 0.5, at });
    clock.settled = 1;
    await service.refresh();
    expect(service.statuses()[0]?.spent).toBeCloseTo(0.5);
    // Another replica's spend appears after a refresh.
    store.spend.push({ path: '/team/b', cost: 0.25, at });
    await service.refresh();
    expect(service.statuses()[0]?.spent).toBeCloseTo(0.75);
    service.stop();
  });

  it('follows another replica’s spend on a shared database with one cheap query per refresh', async () => {
    const { clock, store, service } = await setup({ shared: true });
    const start = clock.now;
    store.spend.push({ path: '/team/a', cost: 0.125, at: start - 500 });
    await service.refresh();
    expect(service.statuses()[0]?.spent).toBeCloseTo(0.125);
    const fullSums = store.fullSums;
    // Spend written by others over the next minutes: each refresh sees it, without summing the day again.
    for (let minute = 1; minute <= 4; minute += 1) {
      clock.now = start + minute * 60_000;
      store.spend.push({ path: '/team/b', cost: 0.125, at: clock.now - 500 });
      await service.refresh();
      expect(service.statuses()[0]?.spent).toBeCloseTo(0.125 * (minute + 1));
    }
    expect(store.fullSums).toBe(fullSums);
    // A record written long after its timestamp (a backlog) is missed until the periodic full read.
    store.spend.push({ path: '/team/c', cost: 0.25, at: start });
    clock.now += 2_000;
    await service.refresh();
    expect(service.statuses()[0]?.spent).toBeCloseTo(0.625);
    clock.now = start + 5 * 60_000 + 1;
    await service.refresh();
    expect(service.statuses()[0]?.spent).toBeCloseTo(0.875);
    expect(() => service.check('/team')).not.toThrow();
    store.spend.push({ path: '/TEAM/d', cost: 0.125, at: clock.now });
    await service.refresh();
    expect(() => service.check('/team')).toThrow(GatewayError);
    service.stop();
  });

  it('picks up budget rules created, edited and deleted through another replica', async () => {
    const { store, service: first } = await setup({ rules: [] });
    const second = new BudgetService({
      store,
      configRules: [],
      whileSettled: (read) => read(0),
      sharedDatabase: false,
      refreshIntervalMs: 60_000,
      logger: pino({ level: 'silent' }),
      now: () => Date.parse('2026-11-21T10:00:00Z'),
    });
    await second.start();
    await first.upsert('/shared', 3600, 2);
    store.spend.push({ path: '/shared/x', cost: 1.5, at: Date.parse('2026-11-21T10:00:00Z') });
    await second.refresh();
    expect(second.statuses().map((status) => [status.rule.userPath, status.rule.amount, status.spent])).toEqual([['/shared', 2, 1.5]]);
    await first.upsert('/shared', 3600, 1);
    await second.refresh();
    expect(() => second.check('/shared/x')).toThrow(GatewayError);
    await first.remove('/shared', 3600);
    await second.refresh();
    expect(second.statuses()).toEqual([]);
    expect(() => second.check('/shared/x')).not.toThrow();
    first.stop();
    second.stop();
  });

  it('manages manual rules: upsert keeps spend, config rules are read-only, unknown deletes are 404', async () => {
    const { clock, store, service } = await setup();
    await service.upsert('/solo', 3600, 2);
    service.charge('/solo', 1.5, 1, clock.now);
    await service.upsert('/SOLO', 3600, 1);
    expect(() => service.check('/solo')).toThrow(GatewayError);
    expect(store.rows).toHaveLength(1);
    await expect(service.upsert('/team', 86400, 5)).rejects.toMatchObject({ status: 409, code: 'budget_read_only' });
    await expect(service.remove('/team', 86400)).rejects.toMatchObject({ status: 409 });
    await expect(service.remove('/nobody', 3600)).rejects.toMatchObject({ status: 404, code: 'budget_not_found' });
    await service.remove('/solo', 3600);
    expect(() => service.check('/solo')).not.toThrow();
    service.stop();
  });

  it('counts spend made before a rule existed whose record is not written yet', async () => {
    const { clock, store, service } = await setup({ rules: [] });
    service.charge('/late/app', 1, 1, clock.now);
    await service.upsert('/late', 86400, 1);
    expect(service.statuses()[0]?.spent).toBeCloseTo(1);
    expect(() => service.check('/late/app')).toThrow(GatewayError);
    // Once the record is written, a refresh neither loses nor doubles it.
    store.spend.push({ path: '/late/app', cost: 1, at: clock.now });
    clock.settled = 1;
    await service.refresh();
    expect(service.statuses()[0]?.spent).toBeCloseTo(1);
    service.stop();
  });

  it('reports the rule that blocks longest when several are spent', async () => {
    const { clock, service } = await setup({
      rules: [
        { userPath: '/', periodSeconds: 3600, amount: 1 },
        { userPath: '/', periodSeconds: 2592000, amount: 1 },
      ],
    });
    service.charge('/x', 2, 1, clock.now);
    const error = rejection(() => service.check('/x'));
    expect(Number(error.headers['Retry-After'])).toBeGreaterThan(3600);
    service.stop();
  });

  it('reserves estimates at admission: parallel requests stop one estimate past the amount', async () => {
    const { clock, service } = await setup({ rules: [{ userPath: '/team', periodSeconds: 86400, amount: 0.2 }] });
    const held = [];
    let refused = 0;
    for (let index = 0; index < 50; index += 1) {
      try {
        held.push(await service.reserve('/team/app', 0.02));
      } catch (error) {
        expect((error as GatewayError).code).toBe('budget_exceeded');
        refused += 1;
      }
    }
    expect(held.length).toBeLessThanOrEqual(11);
    expect(refused).toBe(50 - held.length);
    // Settling: the real cost is charged, then the hold released (twice is harmless).
    for (const [index, reservation] of held.entries()) {
      service.charge('/team/app', 0.01, index + 1, clock.now);
      reservation.release();
      reservation.release();
    }
    expect(service.statuses()[0]?.spent).toBeCloseTo(held.length * 0.01);
    await expect(service.reserve('/team/app', 0.02)).resolves.toBeDefined();
    // Unknown price: nothing held, only the check.
    expect((await service.reserve('/elsewhere', null)).cost).toBe(0);
    service.stop();
  });

  it('moves a reservation to the executed target and releases it once', async () => {
    const { service } = await setup({ rules: [{ userPath: '/team', periodSeconds: 86400, amount: 1 }] });
    const reservation = await service.reserve('/team', 0.5);
    reservation.move(2);
    await expect(service.reserve('/team', 0.1)).rejects.toThrow(GatewayError);
    reservation.release();
    reservation.move(3);
    expect(reservation.cost).toBe(0);
    await expect(service.reserve('/team', 0.1)).resolves.toBeDefined();
    service.stop();
  });

  it('a refresh asked for during another one reads the rules written meanwhile (an admin write through another worker)', async () => {
    const { clock, store, service } = await setup({ rules: [] });
    const list = store.list.bind(store);
    let release = (): void => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    store.list = async () => {
      const rows = await list();
      await gate;
      return rows;
    };
    const periodic = service.refresh();
    await new Promise((resolve) => setImmediate(resolve));
    const at = clock.now;
    await store.upsert({ userPath: '/par', period: 'daily', periodSeconds: 86400, amount: 0.2, createdAt: at, updatedAt: at });
    const asked = service.refresh();
    release();
    await Promise.all([periodic, asked]);
    expect(service.statuses().map((status) => status.rule.userPath)).toEqual(['/par']);
  });
});
