import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough, Readable } from 'node:stream';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { providerError } from '../../errors/gateway-error.ts';
import { abortSourceOf } from '../../core/abort-source.ts';
import { relay, type RelayResult } from '../../streaming/relay.ts';
import { MessagesStreamRenderer } from './stream-renderer.ts';
import { MessagesStreamTranslator } from './stream-translator.ts';

// The relay on a real loopback socket: what the client reads, what the pipeline is told
// (usage, completion, client close, upstream failure), and what the cache keeps.

const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}): string =>
  `data: ${JSON.stringify({ id: 'c1', model: 'm', choices: [{ index: 0, delta }], ...extra })}\n\n`;
const usageChunk = `data: ${JSON.stringify({ id: 'c1', choices: [], usage: { prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 } })}\n\n`;

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

/** Serves one relayed stream; resolves with the server's URL and the relay's result. */
async function serve(
  upstream: Readable,
  options: { provider: string; captureLimit?: number } = { provider: 'p' },
): Promise<{ url: string; result: Promise<RelayResult> }> {
  let settle: (result: RelayResult) => void = () => {};
  const result = new Promise<RelayResult>((resolve) => (settle = resolve));
  server = createServer((_request, response) => {
    const controller = new AbortController();
    response.once('close', () => {
      if (!response.writableFinished) controller.abort();
      upstream.destroy();
    });
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const translator = new MessagesStreamTranslator({ model: 'm', fallbackId: 'r', estimatedInputTokens: 1 });
    const renderer = new MessagesStreamRenderer(translator, options.provider, options.captureLimit);
    void relay(upstream, response, renderer, options.provider, abortSourceOf(controller.signal)).then(settle);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/`, result };
}

function eventNames(text: string): string[] {
  return [...text.matchAll(/^event: (\S+)$/gm)].map((match) => match[1] ?? '');
}

describe('MessagesStreamRenderer', () => {
  it('relays a whole stream split at odd byte boundaries, observing usage and capturing the events sent', async () => {
    const sse = chunk({ content: 'Hel' }) + chunk({ content: 'lo' }, { finish_reason: 'stop' }) + usageChunk + 'data: [DONE]\n\n';
    const pieces = sse.match(/[\s\S]{1,7}/g) ?? [];
    const { url, result } = await serve(Readable.from(pieces.map((piece) => Buffer.from(piece))), { provider: 'p', captureLimit: 10_000 });
    const text = await (await request(url)).body.text();
    expect(eventNames(text)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    const relay = await result;
    expect(relay).toMatchObject({ completed: true, clientClosed: false, error: null });
    expect(relay.usage).toEqual({ prompt_tokens: 4, completion_tokens: 2, total_tokens: 6 });
    expect(relay.captured).toBe(text);
  });

  it('ends with an error event when the upstream breaks off', async () => {
    const upstream = new PassThrough();
    const { url, result } = await serve(upstream);
    upstream.write(chunk({ content: 'partial' })); // the head goes out with the first write
    const response = await request(url);
    setTimeout(() => upstream.destroy(new Error('socket hang up')), 50);
    const text = await response.body.text();
    expect(eventNames(text).at(-1)).toBe('error');
    expect(text).toContain('"type":"api_error"');
    const relay = await result;
    expect(relay.completed).toBe(false);
    expect(relay.error).toBeInstanceOf(Error);
  });

  it("keeps the upstream's own error when a translating adapter fails the stream", async () => {
    const upstream = new PassThrough();
    const { url, result } = await serve(upstream);
    upstream.write(chunk({ content: 'partial' }));
    const response = await request(url);
    setTimeout(() => upstream.destroy(providerError('Overloaded', { provider: 'claude', status: 529 })), 50);
    const text = await response.body.text();
    expect(text.split('\n\n').at(-2)).toBe(
      'event: error\ndata: {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    );
    expect((await result).error).toBeInstanceOf(Error);
  });

  it('stops at an error chunk from the upstream and reports it', async () => {
    const sse = chunk({ content: 'a' }) + `data: {"error":{"message":"boom"}}\n\n` + chunk({ content: 'b' });
    const { url, result } = await serve(Readable.from([Buffer.from(sse)]), { provider: 'p', captureLimit: 10_000 });
    const text = await (await request(url)).body.text();
    expect(eventNames(text)).toEqual(['message_start', 'content_block_start', 'content_block_delta', 'error']);
    expect(text).toContain('"message":"boom"');
    const relay = await result;
    expect(relay).toMatchObject({ completed: false, captured: null, error: { message: 'boom' } });
  });

  it('reports a client that left mid-stream', async () => {
    const upstream = new PassThrough();
    const { url, result } = await serve(upstream);
    const controller = new AbortController();
    upstream.write(chunk({ content: 'first' }));
    const response = await request(url, { signal: controller.signal });
    for await (const _piece of response.body) break;
    controller.abort();
    const relay = await result;
    expect(relay).toMatchObject({ completed: false, clientClosed: true, error: null });
  });
});
