import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { abortSourceOf } from '../../core/abort-source.ts';
import { relay, type RelayResult } from '../../streaming/relay.ts';
import { NativeMessagesRenderer } from './native-stream-renderer.ts';

type NativeRelayOptions = { provider: string; captureLimit?: number };

// The native relay on a real loopback socket: the client reads the upstream's bytes, the
// pipeline is told the usage (message_start merged with message_delta), the end, a failure.

const event = (data: Record<string, unknown>): string => `event: ${String(data['type'])}\ndata: ${JSON.stringify(data)}\n\n`;
const start = event({
  type: 'message_start',
  message: { id: 'msg_1', usage: { input_tokens: 10, cache_read_input_tokens: 30, cache_creation_input_tokens: 5, output_tokens: 1 } },
});
const text = event({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hé' } });
const delta = event({
  type: 'message_delta',
  delta: { stop_reason: 'end_turn' },
  usage: { output_tokens: 7, cache_read_input_tokens: null },
});
const stop = event({ type: 'message_stop' });

let server: Server | undefined;

afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

async function serve(upstream: Readable, options: NativeRelayOptions = { provider: 'p' }): Promise<{ text: string; relay: RelayResult }> {
  let settle: (result: RelayResult) => void = () => {};
  const result = new Promise<RelayResult>((resolve) => (settle = resolve));
  server = createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    const renderer = new NativeMessagesRenderer(options.provider, options.captureLimit);
    void relay(upstream, response, renderer, options.provider, abortSourceOf(new AbortController().signal)).then(settle);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const reply = await request(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  return { text: await reply.body.text(), relay: await result };
}

/** The text cut every `size` bytes (1 splits the UTF-8 of é too). */
function bytes(source: string, size: number): Readable {
  const all = Buffer.from(source);
  const pieces: Buffer[] = [];
  for (let offset = 0; offset < all.length; offset += size) pieces.push(all.subarray(offset, offset + size));
  return Readable.from(pieces);
}

describe('NativeMessagesRenderer', () => {
  it.each([1, 13, 4096])('relays the bytes unchanged and meters the merged usage (cut every %i bytes)', async (size) => {
    const sse = start + text + delta + stop;
    const { text: received, relay } = await serve(bytes(sse, size), { provider: 'p', captureLimit: 10_000 });
    expect(received).toBe(sse);
    expect(relay).toMatchObject({ completed: true, clientClosed: false, error: null, captured: sse });
    expect(relay.usage).toMatchObject({
      prompt_tokens: 45,
      completion_tokens: 7,
      total_tokens: 52,
      prompt_tokens_details: { cached_tokens: 30, cache_write_tokens: 5 },
    });
  });

  it('keeps no copy of a stream over the capture limit', async () => {
    const { relay } = await serve(bytes(start + text + delta + stop, 64), { provider: 'p', captureLimit: 100 });
    expect(relay).toMatchObject({ completed: true, captured: null });
  });

  it("passes the upstream's error event through and reports the stream as failed", async () => {
    const failure = event({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    const { text: received, relay } = await serve(bytes(start + text + failure, 4096));
    expect(received).toBe(start + text + failure);
    expect(relay).toMatchObject({ completed: false, captured: null });
    expect(String(relay.error)).toContain('Overloaded');
  });

  it('ends a stream cut before message_stop with an error event', async () => {
    const { text: received, relay } = await serve(bytes(start + text, 4096));
    expect(received.startsWith(start + text)).toBe(true);
    expect(received.slice((start + text).length)).toMatch(/^event: error\ndata: \{"type":"error","error":\{"type":"api_error"/);
    expect(relay.completed).toBe(false);
    expect(relay.usage).toMatchObject({ prompt_tokens: 45 });
  });
});
