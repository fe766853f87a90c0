import { setTimeout as sleep } from 'node:timers/promises';

import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';

import { usageOf } from '../support/admin.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { bearer, type RawReply, rawRequest } from '../support/http.ts';
import { MOCK_REALTIME_USAGE, type MockRealtime, startMockRealtime } from '../support/mock-realtime.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';

// GET /v1/realtime (WebSocket): a relayed session both ways, credentials swapped, usage from
// response.done, one concurrency slot held for the whole session, refusals as HTTP envelopes
// before any upgrade (SEED-SPEC "Limits" 10, CONTRACT 4 and 5).

const REALTIME_KEY = 'sk-realtime-upstream';

/** A session's incoming events, awaited one at a time. */
class Session {
  readonly socket: WebSocket;
  private readonly queue: Array<{ data: Buffer; binary: boolean }> = [];
  private waiting: (() => void) | null = null;
  readonly closed: Promise<{ code: number; reason: string }>;
  /** Headers of the 101 answer. */
  upgradeHeaders: Record<string, unknown> = {};

  constructor(socket: WebSocket) {
    this.socket = socket;
    socket.once('upgrade', (response) => (this.upgradeHeaders = response.headers));
    socket.on('message', (data: Buffer, binary) => {
      this.queue.push({ data, binary });
      this.waiting?.();
    });
    this.closed = new Promise((resolve) => socket.once('close', (code, reason) => resolve({ code, reason: reason.toString() })));
  }

  async next(): Promise<{ data: Buffer; binary: boolean }> {
    const deadline = Date.now() + 3000;
    while (this.queue.length === 0) {
      if (Date.now() > deadline) throw new Error('no frame within 3 s');
      await new Promise<void>((resolve) => {
        this.waiting = resolve;
        setTimeout(resolve, 50);
      });
    }
    return this.queue.shift() as { data: Buffer; binary: boolean };
  }

  async nextEvent(): Promise<Record<string, unknown>> {
    const frame = await this.next();
    expect(frame.binary).toBe(false);
    return JSON.parse(frame.data.toString('utf8')) as Record<string, unknown>;
  }

  send(event: Record<string, unknown>): void {
    this.socket.send(JSON.stringify(event));
  }
}

interface Attempt {
  headers?: Record<string, string>;
  protocols?: string[];
}

/** Opens a session; rejects with the HTTP answer when the gateway refuses the upgrade. */
function connect(gateway: GatewayProcess, query: string, attempt: Attempt = {}): Promise<Session> {
  const headers = attempt.headers ?? { authorization: `Bearer ${MASTER_KEY}` };
  const socket = new WebSocket(`ws://127.0.0.1:${gateway.port}/v1/realtime?${query}`, attempt.protocols ?? [], { headers });
  const session = new Session(socket);
  return new Promise((resolve, reject) => {
    socket.once('open', () => resolve(session));
    socket.once('unexpected-response', (_request, response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const reply: RawReply = { status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString() };
        reject(Object.assign(new Error(`refused with ${reply.status}`), { reply }));
      });
    });
    socket.once('error', reject);
  });
}

async function refusal(gateway: GatewayProcess, query: string, attempt: Attempt = {}): Promise<RawReply> {
  try {
    const session = await connect(gateway, query, attempt);
    session.socket.close();
  } catch (error) {
    const reply = (error as { reply?: RawReply }).reply;
    if (reply !== undefined) return reply;
    throw error;
  }
  throw new Error('the session was accepted');
}

describe('realtime WebSocket relay', () => {
  let mock: MockUpstream;
  let realtime: MockRealtime;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    realtime = await startMockRealtime();
    const configYaml = `
providers:
  openai:
    type: openai
    api_key: sk-upstream
    base_url: ${mock.url}
    models: [mock-model]
  rt:
    type: openai-compatible
    api_key: ${REALTIME_KEY}
    base_url: ${realtime.url}
    models: [gpt-realtime, gpt-realtime-mini]
rate_limits:
  user_paths:
    - path: /solo
      limits: [{ period: concurrent, max_requests: 1 }]
    - path: /minute
      limits: [{ period: minute, max_requests: 1 }]
  models:
    - model: gpt-realtime-mini
      limits: [{ period: concurrent, max_requests: 1 }]
pricing:
  rt/gpt-realtime: { input_per_mtok: 4, output_per_mtok: 10 }
`;
    gateway = await startGateway({ env: { MASTER_KEY }, configYaml });
  });

  afterAll(async () => {
    await gateway?.stop();
    await realtime?.close();
    await mock?.close();
  });

  beforeEach(() => {
    realtime.refuseWith(null);
  });

  it('relays text and binary frames both ways with the upstream credentials and the bare model', async () => {
    const before = realtime.connections.length;
    const session = await connect(gateway, 'model=rt/gpt-realtime&intent=conversation');
    const created = await session.nextEvent();
    expect(created['type']).toBe('session.created');
    expect((created['session'] as Record<string, unknown>)['model']).toBe('gpt-realtime');
    const upstream = realtime.connections[before];
    expect(upstream?.query.get('model')).toBe('gpt-realtime');
    expect(upstream?.query.get('intent')).toBe('conversation');
    expect(upstream?.headers.authorization).toBe(`Bearer ${REALTIME_KEY}`);
    expect(JSON.stringify(upstream?.headers)).not.toContain(MASTER_KEY);
    expect(upstream?.headers['openai-beta']).toBeUndefined();

    session.send({ type: 'session.update', session: { instructions: 'héllo' } });
    const echo = await session.nextEvent();
    expect(echo).toEqual({ type: 'test.echo', event: { type: 'session.update', session: { instructions: 'héllo' } } });
    const audio = Buffer.from([0, 1, 2, 253, 254, 255]);
    session.socket.send(audio, { binary: true });
    const back = await session.next();
    expect(back.binary).toBe(true);
    expect(back.data.equals(audio)).toBe(true);
    expect(upstream?.frames.map((frame) => frame.binary)).toEqual([false, true]);

    session.socket.close(4001, 'client done');
    await realtime.waitFor(() => upstream?.closeCode !== null);
    expect(upstream?.closeCode).toBe(4001);
  });

  it('closes the client when the upstream ends the session, with its code', async () => {
    const session = await connect(gateway, 'model=gpt-realtime');
    await session.nextEvent();
    session.send({ type: 'test.close', code: 4000 });
    expect((await session.closed).code).toBe(4000);
  });

  it('accepts the key in the browser subprotocol and forwards the beta interface choice', async () => {
    const before = realtime.connections.length;
    const protocols = ['realtime', `openai-insecure-api-key.${MASTER_KEY}`, 'openai-beta.realtime-v1'];
    const session = await connect(gateway, 'model=rt/gpt-realtime', { headers: {}, protocols });
    expect(session.socket.protocol).toBe('realtime');
    await session.nextEvent();
    const upstream = realtime.connections[before];
    expect(upstream?.headers['openai-beta']).toBe('realtime=v1');
    expect(upstream?.headers['sec-websocket-protocol']).toBeUndefined();
    session.socket.close();
    await session.closed;
  });

  it('records the summed usage of response.done events once the session ends', async () => {
    const session = await connect(gateway, 'model=rt/gpt-realtime', {
      headers: { authorization: `Bearer ${MASTER_KEY}`, 'x-user-path': '/usage-rt' },
    });
    await session.nextEvent();
    for (let round = 0; round < 2; round += 1) {
      session.send({ type: 'response.create' });
      expect((await session.nextEvent())['type']).toBe('response.created');
      const done = await session.nextEvent();
      expect(done['type']).toBe('response.done');
    }
    session.socket.close();
    await session.closed;
    const row = await usageOf(gateway, '/usage-rt');
    expect(row?.requests).toBe(1);
    expect(row?.prompt_tokens).toBe(2 * MOCK_REALTIME_USAGE.input_tokens);
    expect(row?.completion_tokens).toBe(2 * MOCK_REALTIME_USAGE.output_tokens);
    expect(row?.total_tokens).toBe(2 * MOCK_REALTIME_USAGE.total_tokens);
  });

  it('holds one concurrency slot for the whole session: a second one gets 429 before any upgrade, until the first closes', async () => {
    const headers = { authorization: `Bearer ${MASTER_KEY}`, 'x-user-path': '/solo' };
    const first = await connect(gateway, 'model=rt/gpt-realtime', { headers });
    await first.nextEvent();
    const upstreamBefore = realtime.connections.length;
    const refused = await refusal(gateway, 'model=rt/gpt-realtime', { headers });
    const error = expectEnvelope(refused, { status: 429, type: 'rate_limit_error', provider: 'ratelimit', code: 'rate_limit_exceeded' });
    expect(error.message).toBe('rate limit exceeded for /solo: concurrent request limit of 1 reached');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(realtime.connections.length).toBe(upstreamBefore);

    // The slot is held while frames flow, and given back when the session closes.
    first.send({ type: 'ping' });
    await first.nextEvent();
    first.socket.close();
    await first.closed;
    let second: Session | undefined;
    for (let tries = 0; tries < 50 && second === undefined; tries += 1) {
      second = await connect(gateway, 'model=rt/gpt-realtime', { headers }).catch(async () => {
        await sleep(50);
        return undefined;
      });
    }
    expect(second).toBeDefined();
    second?.socket.close();
  });

  it('reserves one response of the session at admission: a second session on a spent-by-holds budget gets 429 budget_exceeded', async () => {
    // The default output cap (4096 tokens) at $10/M holds about $0.04 for the session, over the $0.01 budget.
    const put = await rawRequest(`${gateway.url}/admin/budgets`, {
      method: 'PUT',
      headers: bearer(),
      body: { user_path: '/rt-budget', period: 'daily', amount: 0.01 },
    });
    expect([200, 201]).toContain(put.status);
    const headers = { authorization: `Bearer ${MASTER_KEY}`, 'x-user-path': '/rt-budget' };
    const first = await connect(gateway, 'model=rt/gpt-realtime', { headers });
    await first.nextEvent();
    const refused = await refusal(gateway, 'model=rt/gpt-realtime', { headers });
    expectEnvelope(refused, { status: 429, type: 'rate_limit_error', provider: 'budget', code: 'budget_exceeded' });
    first.socket.close();
    await first.closed;
    // The hold goes back with the session (it reported no usage: nothing is spent).
    let second: Session | undefined;
    for (let tries = 0; tries < 50 && second === undefined; tries += 1) {
      second = await connect(gateway, 'model=rt/gpt-realtime', { headers }).catch(async () => {
        await sleep(50);
        return undefined;
      });
    }
    expect(second).toBeDefined();
    second?.socket.close();
  });

  it('applies model rules to the session and refuses a saturated model with 429 without calling the upstream', async () => {
    const first = await connect(gateway, 'model=rt/gpt-realtime-mini');
    await first.nextEvent();
    const before = realtime.connections.length;
    const refused = await refusal(gateway, 'model=rt/gpt-realtime-mini');
    const error = expectEnvelope(refused, { status: 429, type: 'rate_limit_error', provider: 'ratelimit' });
    expect(error.message).toBe('rate limit exceeded for model gpt-realtime-mini: concurrent request limit of 1 reached');
    expect(realtime.connections.length).toBe(before);
    first.socket.close();
    await first.closed;
  });

  it('counts a session as one request in a request window (429 with Retry-After)', async () => {
    const headers = { authorization: `Bearer ${MASTER_KEY}`, 'x-user-path': '/minute', 'x-request-id': 'rt-session-1' };
    const session = await connect(gateway, 'model=rt/gpt-realtime', { headers });
    expect(session.upgradeHeaders['x-request-id']).toBe('rt-session-1');
    expect(session.upgradeHeaders['x-ratelimit-remaining-requests']).toBe('0');
    session.socket.close();
    const refused = await refusal(gateway, 'model=rt/gpt-realtime', { headers });
    const error = expectEnvelope(refused, { status: 429, type: 'rate_limit_error', provider: 'ratelimit', code: 'rate_limit_exceeded' });
    expect(error.message).toBe('rate limit exceeded for /minute: minute request limit of 1 reached');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(refused.headers['x-ratelimit-remaining-requests']).toBe('0');
  });

  it('refuses bad credentials, unknown models and other paths with HTTP envelopes', async () => {
    expectEnvelope(await refusal(gateway, 'model=rt/gpt-realtime', { headers: {} }), { status: 401, type: 'authentication_error' });
    expectEnvelope(await refusal(gateway, 'model=rt/gpt-realtime', { headers: { authorization: 'Bearer wrong' } }), {
      status: 401,
      type: 'authentication_error',
      code: 'invalid_credentials',
    });
    expectEnvelope(await refusal(gateway, 'model=nope'), { status: 404, type: 'not_found_error', code: 'model_not_found' });
    expectEnvelope(await refusal(gateway, 'voice=alloy'), {
      status: 400,
      type: 'invalid_request_error',
      code: 'missing_field',
      param: 'model',
    });
    const other = await new Promise<number>((resolve, reject) => {
      const socket = new WebSocket(`ws://127.0.0.1:${gateway.port}/v1/elsewhere`, { headers: { authorization: `Bearer ${MASTER_KEY}` } });
      socket.once('unexpected-response', (_request, response) => resolve(response.statusCode ?? 0));
      socket.once('open', () => reject(new Error('upgraded')));
    });
    expect(other).toBe(404);
    const plain = await rawRequest(`${gateway.url}/v1/realtime?model=rt/gpt-realtime`, { headers: bearer() });
    expectEnvelope(plain, { status: 400, type: 'invalid_request_error', code: 'invalid_body' });
    expectEnvelope(await rawRequest(`${gateway.url}/v1/realtime`), { status: 401, type: 'authentication_error' });
  });

  it('maps an upstream refusal to the envelope of its status, provider named', async () => {
    realtime.refuseWith({ status: 401, body: JSON.stringify({ error: { message: 'Incorrect API key provided' } }) });
    const error = expectEnvelope(await refusal(gateway, 'model=rt/gpt-realtime'), {
      status: 401,
      type: 'authentication_error',
      provider: 'rt',
    });
    expect(error.message).toBe('Incorrect API key provided');
    realtime.refuseWith({ status: 429, body: '{"error":{"message":"slow down"}}', headers: { 'retry-after': '9' } });
    const limited = await refusal(gateway, 'model=rt/gpt-realtime');
    expectEnvelope(limited, { status: 429, type: 'rate_limit_error', provider: 'rt' });
    expect(limited.headers['retry-after']).toBe('9');
  });
});

describe('realtime sessions on shutdown', () => {
  it('are closed with 1001 (going away) on both sides, and the gateway exits 0', async () => {
    const realtime = await startMockRealtime();
    const configYaml = `
providers:
  rt:
    type: openai-compatible
    api_key: ${REALTIME_KEY}
    base_url: ${realtime.url}
    models: [gpt-realtime]
`;
    const gateway = await startGateway({ env: { MASTER_KEY }, configYaml });
    try {
      const session = await connect(gateway, 'model=gpt-realtime');
      await session.nextEvent();
      const started = Date.now();
      const exited = gateway.stop('SIGTERM');
      expect((await session.closed).code).toBe(1001);
      expect(await exited).toBe(0);
      expect(Date.now() - started).toBeLessThan(10_000);
      await realtime.waitFor((connections) => connections[0]?.closeCode !== null);
      expect(realtime.connections[0]?.closeCode).toBe(1001);
    } finally {
      await gateway.stop();
      await realtime.close();
    }
  });
});
