import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import type { MockUpstream } from '../support/mock-upstream.ts';
import { chat, chatCount, closeAll, instancesEnv, servedBy, startMocks } from '../support/virtual-models.ts';

// Issue 15 and ADR 13: a direct request whose target has an open circuit goes on to its
// fallbacks (without calling the target) when its rule's `on` names a failure that opens a
// circuit; under `on: [429]` it keeps the 503 `circuit_open` of a direct request.

describe('failover rules and circuit breakers', () => {
  let mocks: MockUpstream[];
  let a: MockUpstream;
  let b: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mocks = await startMocks(2);
    [a, b] = mocks as [MockUpstream, MockUpstream];
    const env = instancesEnv(mocks, ['cb-open', 'cb-strict'], {
      CIRCUIT_BREAKER_FAILURES: '2',
      CIRCUIT_BREAKER_OPEN_SECONDS: '600',
      UPSTREAM_RETRIES: '0',
    });
    const configYaml = `
failover:
  rules:
    - { model: openai/cb-open, fallbacks: [openai-b/cb-open] }
    - { model: openai/cb-strict, fallbacks: [openai-b/cb-strict], on: [429] }
`;
    gateway = await startGateway({ env, configYaml, startTimeoutMs: 60_000 });
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await closeAll(mocks ?? []);
  });

  it('an open circuit is passed over without a call under the default on', async () => {
    a.setBehavior('cb-open', { kind: 'error', status: 500 });
    expect(await servedBy(gateway, 'openai/cb-open')).toBe('openai-b');
    expect(await servedBy(gateway, 'openai/cb-open')).toBe('openai-b');
    expect(chatCount(a, 'cb-open')).toBe(2); // the second failure opened openai's circuit
    for (let index = 0; index < 3; index += 1) expect(await servedBy(gateway, 'openai/cb-open')).toBe('openai-b');
    expect(chatCount(a, 'cb-open')).toBe(2);
    expect(chatCount(b, 'cb-open')).toBe(5);
  });

  it('under on: [429] the open circuit answers 503 circuit_open and no fallback is called', async () => {
    const reply = await chat(gateway, 'openai/cb-strict');
    expectEnvelope(reply, { status: 503, type: 'provider_error', provider: 'openai', code: 'circuit_open' });
    expect(chatCount(a, 'cb-strict')).toBe(0);
    expect(chatCount(b, 'cb-strict')).toBe(0);
  });
});
