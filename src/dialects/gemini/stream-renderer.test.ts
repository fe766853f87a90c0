import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { abortSourceOf } from '../../core/abort-source.ts';
import { relay as relayStream, type RelayResult } from '../../streaming/relay.ts';
import { GeminiStreamRenderer, type Framing } from './stream-renderer.ts';

type GeminiRelayOptions = { provider: string; framing: Framing; captureLimit?: number };
import { GeminiStreamTranslator } from './stream-translator.ts';

// The relay on a real loopback socket: what the client reads (SSE or a JSON array), what the
// pipeline is told (usage, completion, upstream failure), and what the cache keeps.

const chunk = (delta: Record<string, unknown>, finish: string | null = null): string =>
  `data: ${JSON.stringify({ id: 'c1', model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
const usageChunk = `data: ${JSON.stringify({ id: 'c1', choices: [], usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 } })}\n\n`;

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

async function relay(frames: string[], options: GeminiRelayOptions): Promise<{ text: string; result: RelayResult }> {
  let settle: (result: RelayResult) => void = () => {};
  const result = new Promise<RelayResult>((resolve) => (settle = resolve));
  server = createServer((_request, response) => {
    response.writeHead(200);
    const translator = new GeminiStreamTranslator({ model: 'm', fallbackId: 'r' });
    const renderer = new GeminiStreamRenderer(translator, options.provider, options.framing, options.captureLimit);
    const upstream = Readable.from(frames.map((frame) => Buffer.from(frame)));
    void relayStream(upstream, response, renderer, options.provider, abortSourceOf(new AbortController().signal)).then(settle);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const response = await request(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  return { text: await response.body.text(), result: await result };
}

const complete = [chunk({ content: 'Hi' }), chunk({}, 'stop'), usageChunk, 'data: [DONE]\n\n'];

describe('GeminiStreamRenderer', () => {
  it('writes SSE chunks, the last with finish reason and usage, and keeps them for the cache', async () => {
    const { text, result } = await relay(complete, { provider: 'p', framing: 'sse', captureLimit: 10_000 });
    const events = text.split('\r\n\r\n').filter((event) => event !== '');
    expect(events.map((event) => JSON.parse(event.slice('data: '.length)) as unknown)).toMatchObject([
      { candidates: [{ content: { parts: [{ text: 'Hi' }] } }] },
      { candidates: [{ finishReason: 'STOP' }], usageMetadata: { totalTokenCount: 6 } },
    ]);
    expect(result).toMatchObject({ completed: true, error: null, usage: { prompt_tokens: 4 } });
    expect(result.captured).toBe(text);
  });

  it('writes a JSON array without alt=sse', async () => {
    const { text } = await relay(complete, { provider: 'p', framing: 'json' });
    expect(JSON.parse(text)).toMatchObject([
      { candidates: [{ content: { parts: [{ text: 'Hi' }] } }] },
      { usageMetadata: { totalTokenCount: 6 } },
    ]);
  });

  it('ends a stream cut before its finish with a Google error, in the array too, and caches nothing', async () => {
    const { text, result } = await relay([chunk({ content: 'Hi' })], { provider: 'p', framing: 'json', captureLimit: 10_000 });
    const chunks = JSON.parse(text) as Array<Record<string, unknown>>;
    expect(chunks.at(-1)).toMatchObject({ error: { code: 502, status: 'INTERNAL', message: expect.stringContaining('p') } });
    expect(result).toMatchObject({ completed: false, captured: null });
  });

  it('ends with a Google error when the upstream reports one inside its stream', async () => {
    const failing = [chunk({ content: 'Hi' }), `data: ${JSON.stringify({ error: { message: 'overloaded', type: 'server_error' } })}\n\n`];
    const { text, result } = await relay(failing, { provider: 'p', framing: 'sse' });
    expect(text).toContain('"message":"overloaded"');
    expect(result.completed).toBe(false);
  });
});
