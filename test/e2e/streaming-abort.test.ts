import type OpenAI from 'openai';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { openAIClient } from '../support/clients.ts';
import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { bearer, chatBody } from '../support/http.ts';
import { type MockUpstream, type RecordedRequest, startMockUpstream } from '../support/mock-upstream.ts';
import { parseSse } from '../support/streams.ts';
import { chatRequests, waitForChat } from '../support/upstream.ts';

/** How long the upstream may take to see the disconnect. */
const abortPropagationMs = 2000;

function isAbortError(error: unknown): boolean {
  return error instanceof Error && (error.name === 'AbortError' || error.name === 'APIUserAbortError' || /abort/i.test(error.message));
}

describe('streaming and client aborts', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;
  let client: OpenAI;
  let chatUrl: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    gateway = await startGateway({ env: gatewayEnv(mock, { OPENAI_MODELS: 'mock-model,slow-stream,hang' }) });
    client = openAIClient(gateway);
    chatUrl = `${gateway.url}/v1/chat/completions`;
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  beforeEach(() => {
    mock.reset();
  });

  const abortedUpstream = (requests: RecordedRequest[]): boolean =>
    requests.some((recorded) => recorded.path.endsWith('/chat/completions') && recorded.aborted);

  it('aborts the upstream stream when the client disconnects mid-stream', async () => {
    const controller = new AbortController();
    const stream = await client.chat.completions.create(
      { model: 'openai/slow-stream', messages: [{ role: 'user', content: 'count slowly' }], stream: true },
      { signal: controller.signal },
    );
    let received = 0;
    // The openai client ends the iteration quietly (or with an abort error) once aborted.
    const reading = (async () => {
      for await (const chunk of stream) {
        expect(chunk.object).toBe('chat.completion.chunk');
        received += 1;
        if (received === 2) controller.abort();
      }
    })().then(
      () => 'ended',
      (error: unknown) => (isAbortError(error) ? 'ended' : String(error)),
    );
    expect(await reading).toBe('ended');
    expect(received).toBe(2);
    const abortedAt = Date.now();
    await mock.waitFor(abortedUpstream, abortPropagationMs);
    expect(Date.now() - abortedAt).toBeLessThan(abortPropagationMs);
    const [upstream] = chatRequests(mock);
    expect(upstream?.aborted).toBe(true);
    expect(upstream?.completed).toBe(false);
  });

  it('aborts a hanging non-streaming upstream request when the client gives up', async () => {
    const controller = new AbortController();
    const pending = request(chatUrl, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json' },
      body: JSON.stringify(chatBody('openai/hang')),
      signal: controller.signal,
    });
    const outcome = pending.then(
      () => 'answered',
      (error: unknown) => (isAbortError(error) ? 'aborted' : String(error)),
    );
    const upstream = await waitForChat(mock, 'hang');
    expect(upstream.aborted).toBe(false);
    controller.abort();
    expect(await outcome).toBe('aborted');
    await mock.waitFor(abortedUpstream, abortPropagationMs);
    expect(upstream.aborted).toBe(true);
  });

  it('aborts a hanging streaming upstream request when the client gives up before the first byte', async () => {
    const controller = new AbortController();
    const pending = request(chatUrl, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json' },
      body: JSON.stringify(chatBody('openai/hang', { stream: true })),
      signal: controller.signal,
    });
    const outcome = pending.then(
      () => 'answered',
      (error: unknown) => (isAbortError(error) ? 'aborted' : String(error)),
    );
    const upstream = await waitForChat(mock, 'hang');
    controller.abort();
    expect(await outcome).toBe('aborted');
    await mock.waitFor(abortedUpstream, abortPropagationMs);
    expect(upstream.aborted).toBe(true);
  });

  it('delivers a slow stream incrementally, not buffered to the end', async () => {
    const started = Date.now();
    const response = await request(chatUrl, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json' },
      body: JSON.stringify(chatBody('openai/slow-stream', { stream: true })),
    });
    expect(response.statusCode).toBe(200);
    let text = '';
    let firstFrameAt: number | null = null;
    let reads = 0;
    for await (const piece of response.body) {
      text += String(piece);
      reads += 1;
      if (firstFrameAt === null && text.includes('data: ')) firstFrameAt = Date.now();
    }
    const endedAt = Date.now();
    const chunks = parseSse(text);
    expect(chunks.length).toBeGreaterThan(10);
    expect(firstFrameAt).not.toBeNull();
    const firstAfter = (firstFrameAt ?? endedAt) - started;
    const spread = endedAt - (firstFrameAt ?? endedAt);
    // The mock spaces its frames over about two seconds.
    expect(firstAfter).toBeLessThan(1000);
    expect(spread).toBeGreaterThan(1000);
    expect(reads).toBeGreaterThan(10);
    const [upstream] = chatRequests(mock);
    expect(upstream?.completed).toBe(true);
  });

  it('still serves requests after the aborted ones', async () => {
    const completion = await client.chat.completions.create({ model: 'openai/mock-model', messages: [{ role: 'user', content: 'hi' }] });
    expect(completion.choices[0]?.message.content).toBeTruthy();
    expect(gateway.child.exitCode).toBeNull();
  });
});
