import { setTimeout as sleep } from 'node:timers/promises';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { listModels } from '../support/http.ts';
import type { MockUpstream } from '../support/mock-upstream.ts';
import { chatCount, closeAll, inBatches, instancesEnv, servedBy, startMocks, tally } from '../support/virtual-models.ts';

// CONTRACT section 8 / SEED-SPEC function 2: weighted round robin spreads requests in
// proportion to the weights, and least_busy sends traffic away from a target that is slow.

const configYaml = `
virtual_models:
  - name: weighted
    strategy: round_robin
    targets:
      - { provider: openai, model: mock-model, weight: 3 }
      - { provider: openai-b, model: mock-model, weight: 1 }
  - name: weighted-three
    strategy: round_robin
    targets:
      - { provider: openai, model: mock-model-2, weight: 1 }
      - { provider: openai-b, model: mock-model-2, weight: 2 }
      - { provider: openai-c, model: mock-model-2, weight: 1 }
  - name: even
    targets:
      - { provider: openai, model: even-model }
      - { provider: openai-b, model: even-model }
  - name: heavy
    strategy: round_robin
    targets:
      - { provider: openai, model: heavy-model, weight: 1000000 }
      - { provider: openai-b, model: heavy-model, weight: 1000000 }
  - name: least-busy
    strategy: least_busy
    targets:
      - { provider: openai, model: lb-model }
      - { provider: openai-b, model: lb-model }
  - name: least-busy-burst
    strategy: least_busy
    targets:
      - { provider: openai, model: lb-burst }
      - { provider: openai-b, model: lb-burst }
`;

const total = 1000;
/** Allowed distance from the declared share, in percentage points. */
const tolerance = 5;

describe('virtual model load balancing', () => {
  let mocks: MockUpstream[];
  let a: MockUpstream;
  let b: MockUpstream;
  let c: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mocks = await startMocks(3);
    [a, b, c] = mocks as [MockUpstream, MockUpstream, MockUpstream];
    const models = ['mock-model', 'mock-model-2', 'even-model', 'heavy-model', 'lb-model', 'lb-burst'];
    gateway = await startGateway({
      env: instancesEnv(mocks, models, { RATE_LIMITS_ENABLED: 'false', USAGE_ENABLED: 'false' }),
      configYaml,
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await closeAll(mocks ?? []);
  });

  function expectShare(count: number, expectedPercent: number, what: string): void {
    const percent = (count / total) * 100;
    expect(
      Math.abs(percent - expectedPercent),
      `${what}: ${count} of ${total} (${percent}%), expected ${expectedPercent}%`,
    ).toBeLessThanOrEqual(tolerance);
  }

  it('lists the virtual models in GET /v1/models', async () => {
    const ids = (await listModels(gateway)).map((model) => model.id);
    expect(ids).toEqual(expect.arrayContaining(['weighted', 'weighted-three', 'even', 'least-busy', 'openai/mock-model']));
  });

  it('round_robin with weights 3 and 1 sends 75% / 25% of 1,000 requests', async () => {
    const providers = await inBatches(total, 20, () => servedBy(gateway, 'weighted'));
    const served = tally(providers);
    expect([...served.keys()].sort()).toEqual(['openai', 'openai-b']);
    // What the mocks received, not only what the gateway says.
    expect(chatCount(a, 'mock-model') + chatCount(b, 'mock-model')).toBe(total);
    expect(chatCount(c, 'mock-model')).toBe(0);
    expect(served.get('openai')).toBe(chatCount(a, 'mock-model'));
    expectShare(chatCount(a, 'mock-model'), 75, 'openai');
    expectShare(chatCount(b, 'mock-model'), 25, 'openai-b');
  });

  it('round_robin over three targets with weights 1/2/1 sends 25% / 50% / 25%', async () => {
    const served = tally(await inBatches(total, 20, () => servedBy(gateway, 'weighted-three')));
    expect(served.get('openai')).toBe(chatCount(a, 'mock-model-2'));
    expect(served.get('openai-b')).toBe(chatCount(b, 'mock-model-2'));
    expect(served.get('openai-c')).toBe(chatCount(c, 'mock-model-2'));
    expect(chatCount(a, 'mock-model-2') + chatCount(b, 'mock-model-2') + chatCount(c, 'mock-model-2')).toBe(total);
    expectShare(chatCount(a, 'mock-model-2'), 25, 'openai');
    expectShare(chatCount(b, 'mock-model-2'), 50, 'openai-b');
    expectShare(chatCount(c, 'mock-model-2'), 25, 'openai-c');
  });

  it('round_robin without weights alternates between the targets, one request at a time', async () => {
    const sequence: string[] = [];
    for (let index = 0; index < 8; index += 1) sequence.push(await servedBy(gateway, 'even'));
    // Whatever the starting target, consecutive requests never land on the same one.
    for (let index = 1; index < sequence.length; index += 1) expect(sequence[index]).not.toBe(sequence[index - 1]);
    expect(chatCount(a, 'even-model')).toBe(4);
    expect(chatCount(b, 'even-model')).toBe(4);
  });

  it('the largest accepted weights (1,000,000) cost no noticeable time per request', async () => {
    await servedBy(gateway, 'heavy');
    const started = performance.now();
    const served = tally(await inBatches(5, 1, () => servedBy(gateway, 'heavy')));
    const elapsed = performance.now() - started;
    expect((served.get('openai') ?? 0) + (served.get('openai-b') ?? 0)).toBe(5);
    expect(elapsed, `5 sequential requests took ${Math.round(elapsed)} ms`).toBeLessThan(1_500);
  });

  it('least_busy sends most staggered parallel requests to the fast target when the other is slow', async () => {
    a.setBehavior('lb-model', { kind: 'latency', ms: 500 });
    const pending: Array<Promise<string>> = [];
    for (let index = 0; index < 20; index += 1) {
      pending.push(servedBy(gateway, 'least-busy'));
      await sleep(20);
    }
    const served = tally(await Promise.all(pending));
    const slow = chatCount(a, 'lb-model');
    const fast = chatCount(b, 'lb-model');
    expect(slow + fast).toBe(20);
    expect(served.get('openai') ?? 0).toBe(slow);
    expect(fast, `fast target got ${fast} of 20, slow target ${slow}`).toBeGreaterThan(slow);
    // A slow request holds its slot for 500 ms, so the slow target gets at most one at a time.
    expect(slow).toBeLessThanOrEqual(2);
  });

  it('least_busy spreads a burst of simultaneous requests instead of piling them on the slow target', async () => {
    a.setBehavior('lb-burst', { kind: 'latency', ms: 500 });
    b.setBehavior('lb-burst', { kind: 'latency', ms: 500 });
    const served = tally(await Promise.all(Array.from({ length: 10 }, () => servedBy(gateway, 'least-busy-burst'))));
    // Both equally busy: a fair least_busy pick sends about half of a burst to each.
    expect(served.get('openai') ?? 0, JSON.stringify([...served])).toBeLessThanOrEqual(7);
    expect(served.get('openai-b') ?? 0, JSON.stringify([...served])).toBeGreaterThanOrEqual(3);
  });
});
