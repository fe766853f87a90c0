import { setTimeout as sleep } from 'node:timers/promises';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { bearer, call, chatBody, rawRequest } from '../support/http.ts';
import type { MockUpstream } from '../support/mock-upstream.ts';
import { chat, chatCount, closeAll, instancesEnv, servedBy, startMocks } from '../support/virtual-models.ts';

// Circuit breakers per instance (CIRCUIT_BREAKER_FAILURES consecutive failures open it for
// CIRCUIT_BREAKER_OPEN_SECONDS, then one probe decides): an open target of a virtual model is
// skipped without being called.

const openMs = 2_000;

describe('circuit breakers and virtual models', () => {
  let mocks: MockUpstream[];
  let a: MockUpstream;
  let b: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mocks = await startMocks(2);
    [a, b] = mocks as [MockUpstream, MockUpstream];
    const env = instancesEnv(mocks, ['cb-model'], {
      CIRCUIT_BREAKER_FAILURES: '2',
      CIRCUIT_BREAKER_OPEN_SECONDS: String(openMs / 1000),
      UPSTREAM_RETRIES: '0',
    });
    const configYaml = `
virtual_models:
  - name: guarded
    strategy: failover
    targets:
      - { provider: openai, model: cb-model }
      - { provider: openai-b, model: cb-model }
`;
    gateway = await startGateway({ env, configYaml });
  });

  afterAll(async () => {
    await gateway?.stop();
    await closeAll(mocks ?? []);
  });

  /** The `circuit` of the concrete row `openai/cb-model` in GET /admin/models. */
  async function circuitOfA(): Promise<unknown> {
    const reply = await call(gateway, '/admin/models');
    expect(reply.status, reply.text).toBe(200);
    const rows = JSON.parse(reply.text) as Array<Record<string, unknown>>;
    return rows.find((row) => row['id'] === 'openai/cb-model')?.['circuit'];
  }

  it('after two failures the primary is skipped without a call, until the open period ends', async () => {
    a.setBehavior('cb-model', { kind: 'error', status: 500 });
    expect(await servedBy(gateway, 'guarded')).toBe('openai-b');
    expect(await circuitOfA()).toBe('closed'); // one failure is not enough
    expect(await servedBy(gateway, 'guarded')).toBe('openai-b');
    expect(chatCount(a)).toBe(2);
    expect(await circuitOfA()).toBe('open');

    for (let index = 0; index < 5; index += 1) expect(await servedBy(gateway, 'guarded')).toBe('openai-b');
    expect(chatCount(a)).toBe(2); // A's count stops growing while its circuit is open
    expect(chatCount(b)).toBe(7);
  });

  it('a direct request to an instance with an open circuit answers 503 without calling it', async () => {
    const reply = await chat(gateway, 'openai/cb-model');
    expectEnvelope(reply, { status: 503, type: 'provider_error', provider: 'openai', code: 'circuit_open' });
    expect(chatCount(a)).toBe(2);
  });

  it('after the open period one probe reaches the primary; a failed probe opens the circuit again', async () => {
    await sleep(openMs + 200);
    expect(await circuitOfA()).toBe('half_open');
    expect(await servedBy(gateway, 'guarded')).toBe('openai-b');
    expect(chatCount(a)).toBe(3); // the probe
    expect(await circuitOfA()).toBe('open');
    expect(await servedBy(gateway, 'guarded')).toBe('openai-b');
    expect(chatCount(a)).toBe(3);
  });

  it('a successful probe closes the circuit and the primary serves again', async () => {
    a.setBehavior('cb-model', { kind: 'ok' });
    await sleep(openMs + 200);
    expect(await servedBy(gateway, 'guarded')).toBe('openai');
    expect(await circuitOfA()).toBe('closed');
    expect(await servedBy(gateway, 'guarded')).toBe('openai');
    expect(chatCount(a)).toBe(5);
  });

  it('while half-open only one of several simultaneous requests probes the primary', async () => {
    a.setBehavior('cb-model', { kind: 'error', status: 500 });
    await servedBy(gateway, 'guarded');
    await servedBy(gateway, 'guarded');
    expect(await circuitOfA()).toBe('open');
    const before = chatCount(a);
    await sleep(openMs + 200);
    // The probe is slow, so the other requests arrive while it is in flight.
    a.setBehavior('cb-model', { kind: 'latency', ms: 300 });
    const served = await Promise.all(Array.from({ length: 4 }, () => servedBy(gateway, 'guarded')));
    expect(chatCount(a) - before).toBe(1);
    expect(served.filter((provider) => provider === 'openai')).toHaveLength(1);
    expect(served.filter((provider) => provider === 'openai-b')).toHaveLength(3);
  });

  it('a probe whose client goes away does not leave the circuit stuck: a later probe reaches the primary', async () => {
    a.setBehavior('cb-model', { kind: 'error', status: 500 });
    await servedBy(gateway, 'guarded');
    await servedBy(gateway, 'guarded');
    expect(await circuitOfA()).toBe('open');
    await sleep(openMs + 200);
    a.setBehavior('cb-model', { kind: 'hang' });
    const before = chatCount(a);
    const controller = new AbortController();
    const abandoned = rawRequest(`${gateway.url}/v1/chat/completions`, {
      body: chatBody('guarded'),
      headers: bearer(),
      signal: controller.signal,
    }).catch((error: unknown) => error);
    await a.waitFor(() => chatCount(a) === before + 1); // the probe is in flight on A
    controller.abort();
    await abandoned;
    a.setBehavior('cb-model', { kind: 'ok' });
    // Whatever the abandoned probe counted as, A is probed again within one more open period.
    await sleep(openMs + 200);
    const served = [await servedBy(gateway, 'guarded'), await servedBy(gateway, 'guarded')];
    expect(served, `circuit of A: ${String(await circuitOfA())}`).toContain('openai');
    expect(chatCount(a)).toBeGreaterThan(before + 1);
  });
});
