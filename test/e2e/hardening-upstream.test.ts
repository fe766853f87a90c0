import { readFileSync } from 'node:fs';
import type { ServerResponse } from 'node:http';

import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Storage } from '../../src/storage/storage.ts';
import { waitForDrain } from '../../src/streaming/drain.ts';
import { anthropicClient, openAIClient, rejectionOf } from '../support/clients.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { bearer, chatBody, rawRequest } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { createGatewayDatabase, type GatewayDatabase, usageRecordOf } from '../support/storage.ts';

// Issue 15 defects 2-4 through the built gateway, in front of a mock whose answers misbehave:
// a single SSE frame of tens of MiB (linear parsing, a 32 MiB bound with an error event past
// it), JSON answers of hundreds of MiB (UPSTREAM_MAX_RESPONSE_BYTES: 502, reading stopped,
// memory bounded), and streams cut inside a frame or ended without a finish reason (an error
// event the SDKs raise, never a synthetic [DONE]; usage recorded with status 502).

const MiB = 1024 * 1024;
const CAP_MIB = 16;
const HUGE_MIB = 256;
const models = ['truncated', 'no-finish', 'frame-24', 'frame-40', 'huge-json'];

const chunkFrame = (delta: Record<string, unknown>, finish: string | null = null): string =>
  `data: ${JSON.stringify({ id: 'c1', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;

/** Writes with backpressure; false once the client has gone. */
async function write(response: ServerResponse, data: string | Buffer): Promise<boolean> {
  if (response.destroyed) return false;
  if (!response.write(data)) await waitForDrain(response);
  return !response.destroyed;
}

/** Mock bookkeeping of the huge answers: how much was written before the gateway hung up. */
const huge = { sent: 0, cutShort: false };

async function answerHugeJson(response: ServerResponse, head: string): Promise<void> {
  huge.sent = 0;
  huge.cutShort = false;
  response.writeHead(200, { 'content-type': 'application/json' });
  const block = Buffer.alloc(64 * 1024, 'a');
  await write(response, head);
  while (huge.sent < HUGE_MIB * MiB) {
    if (!(await write(response, block))) {
      huge.cutShort = true;
      return;
    }
    huge.sent += block.length;
  }
  response.end('"}}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}');
}

async function answerChat(body: Record<string, unknown>, response: ServerResponse): Promise<void> {
  const model = String(body['model']);
  if (model === 'huge-json')
    return answerHugeJson(response, '{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"');
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  await write(response, chunkFrame({ role: 'assistant', content: '' }) + chunkFrame({ content: 'Hel' }));
  if (model === 'truncated') return void response.end('data: {"id":"c1","object":"chat.completion.chunk","choi');
  if (model === 'no-finish') return void response.end(chunkFrame({ content: 'lo' }));
  const size = (model === 'frame-40' ? 40 : 24) * MiB;
  const frame = Buffer.from(chunkFrame({ content: 'a'.repeat(size) }));
  for (let start = 0; start < frame.length; start += 64 * 1024)
    if (!(await write(response, frame.subarray(start, start + 64 * 1024)))) return;
  response.end(chunkFrame({}, 'stop') + 'data: [DONE]\n\n');
}

/** What `run` threw, or undefined. */
async function failureOf(run: () => Promise<void>): Promise<unknown> {
  try {
    await run();
    return undefined;
  } catch (error) {
    return error;
  }
}

/** CPU seconds the process has used (user + system; clock ticks of 10 ms on Linux). */
function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / 100;
}

function rssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024;
}

describe('upstream answers and streams that misbehave', () => {
  let mock: MockUpstream;
  let database: GatewayDatabase;
  let gateway: GatewayProcess;
  let storage: Storage;
  let client: OpenAI;

  beforeAll(async () => {
    mock = await startMockUpstream({ models, record: false });
    mock.route('POST', '/chat/completions', (request, response) => answerChat(request.body as Record<string, unknown>, response));
    mock.route('POST', '/embeddings', (_request, response) => answerHugeJson(response, '{"object":"list","data":[{"embedding":"'));
    mock.route('POST', '/responses', async (_request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const created = { type: 'response.created', sequence_number: 0, response: { id: 'resp_1', status: 'in_progress', output: [] } };
      const delta = {
        type: 'response.output_text.delta',
        sequence_number: 1,
        item_id: 'm1',
        output_index: 0,
        content_index: 0,
        delta: 'Hel',
      };
      await write(response, `event: response.created\ndata: ${JSON.stringify(created)}\n\n`);
      await write(response, `event: response.output_text.delta\ndata: ${JSON.stringify(delta)}\n\n`);
      response.end('event: response.output_text.delta\ndata: {"type":"response.output_te');
    });
    database = await createGatewayDatabase('sqlite');
    const env = gatewayEnv(mock, { UPSTREAM_MAX_RESPONSE_BYTES: `${CAP_MIB}MB`, UPSTREAM_RETRIES: '0', ...database.env });
    gateway = await startGateway({ env });
    storage = await database.open(gateway);
    client = new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey: 'test-master-key', maxRetries: 0, timeout: 60_000 });
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await storage?.close();
    await database?.dispose();
    await mock?.close();
  });

  /** Streams a chat with the openai SDK to its end; returns what it raised and the request id. */
  async function streamChat(model: string): Promise<{ error: unknown; content: string; requestId: string }> {
    const requestId = `hardening-${model}-${Date.now()}`;
    const stream = await client.chat.completions.create(
      { model: `openai/${model}`, messages: [{ role: 'user', content: 'hi' }], stream: true },
      { headers: { 'x-request-id': requestId } },
    );
    let content = '';
    const error = await failureOf(async () => {
      for await (const chunk of stream) content += chunk.choices[0]?.delta.content ?? '';
    });
    return { error, content, requestId };
  }

  it('a stream cut inside a frame ends with an APIError, never a SyntaxError, and is recorded as 502', async () => {
    const { error, content, requestId } = await streamChat('truncated');
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(error).not.toBeInstanceOf(SyntaxError);
    expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: 'upstream_stream_incomplete', provider: 'openai' });
    expect(content).toBe('Hel');
    expect((await usageRecordOf(storage, requestId)).status).toBe(502);
  });

  it('a stream that ends without a finish reason or [DONE] ends with an APIError', async () => {
    const { error, content, requestId } = await streamChat('no-finish');
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(content).toBe('Hello');
    expect((await usageRecordOf(storage, requestId)).status).toBe(502);
    const raw = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: bearer(),
      body: chatBody('openai/no-finish', { stream: true }),
    });
    expect(raw.text).not.toContain('[DONE]');
    expect(raw.text.trimEnd().split('\n\n').at(-1)).toMatch(/^data: \{"error":\{"type":"provider_error"/);
  });

  it('the same streams on /v1/messages end with an Anthropic error event', async () => {
    const anthropic: Anthropic = anthropicClient(gateway);
    for (const model of ['truncated', 'no-finish']) {
      const stream = anthropic.messages.stream({ model: `openai/${model}`, max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
      const error = await rejectionOf(stream.finalMessage());
      expect(error).toBeInstanceOf(Anthropic.APIError);
    }
  });

  it('a native /v1/responses stream cut inside an event ends with an error event, the cut event withheld', async () => {
    const stream = await client.responses.create({ model: 'openai/truncated', input: 'hi', stream: true });
    const types: string[] = [];
    const error = await rejectionOf(
      (async () => {
        for await (const event of stream) types.push(event.type);
      })(),
    );
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect(types).toEqual(['response.created', 'response.output_text.delta']);
  });

  it('parses a 24 MiB frame in linear time and relays it whole, while /health stays quick', async () => {
    const pid = gateway.child.pid as number;
    const cpuBefore = cpuSeconds(pid);
    const healthLatencies: number[] = [];
    let streaming = true;
    const probe = (async () => {
      while (streaming) {
        const before = performance.now();
        await rawRequest(`${gateway.url}/health`);
        healthLatencies.push(performance.now() - before);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    })();
    // Raw HTTP: the openai SDK's own line decoder is slow on a line this long.
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: bearer(),
      body: chatBody('openai/frame-24', { stream: true }),
    }).finally(() => (streaming = false));
    await probe;
    const frames = reply.text.split('\n\n').filter((frame) => frame !== '');
    expect(frames.at(-1)).toBe('data: [DONE]');
    const big = JSON.parse(String(frames[2]).slice(6)) as { choices: Array<{ delta: { content: string } }>; provider: string };
    expect(big.choices[0]?.delta.content.length).toBe(24 * MiB);
    expect(big.provider).toBe('openai');
    // The quadratic parser spent ~12 s of CPU on this frame; linear work is about 0.5 s.
    expect(cpuSeconds(pid) - cpuBefore).toBeLessThan(4);
    expect(Math.max(...healthLatencies)).toBeLessThan(3_000);
  });

  it('a frame over the 32 MiB bound ends the stream with an upstream_event_too_large error event', async () => {
    const { error } = await streamChat('frame-40');
    expect(error).toBeInstanceOf(OpenAI.APIError);
    expect((error as InstanceType<typeof OpenAI.APIError>).error).toMatchObject({ code: 'upstream_event_too_large', provider: 'openai' });
    // The same bound on /v1/messages: Anthropic's `error` event.
    const messages = anthropicClient(gateway).messages.stream({
      model: 'openai/frame-40',
      max_tokens: 16,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(await rejectionOf(messages.finalMessage())).toBeInstanceOf(Anthropic.APIError);
    expect((await rawRequest(`${gateway.url}/health`)).status).toBe(200);
  });

  it('a JSON answer past UPSTREAM_MAX_RESPONSE_BYTES is a 502, reading stops, and memory stays bounded', async () => {
    const pid = gateway.child.pid as number;
    let peak = rssMiB(pid);
    const sampler = setInterval(() => (peak = Math.max(peak, rssMiB(pid))), 20);
    try {
      for (const [path, body] of [
        ['/v1/chat/completions', chatBody('openai/huge-json')],
        ['/v1/embeddings', { model: 'openai/huge-json', input: 'hi' }],
      ] as const) {
        const reply = await rawRequest(`${gateway.url}${path}`, { headers: bearer(), body });
        expectEnvelope(reply, { status: 502, type: 'provider_error', provider: 'openai', code: 'upstream_response_too_large' });
        await new Promise((resolve) => setTimeout(resolve, 200));
        expect(huge.cutShort, `the gateway read all ${huge.sent} bytes`).toBe(true);
        expect(huge.sent).toBeLessThan(HUGE_MIB * MiB);
      }
    } finally {
      clearInterval(sampler);
    }
    expect(peak).toBeLessThan(400);
    const normal = await openAIClient(gateway).models.list();
    expect(normal.data.length).toBeGreaterThan(0);
  });
});
