import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.ts';
import { anthropicApiBase } from './adapter.ts';
import { openNativeStream } from './messages-api.ts';

const event = (data: Record<string, unknown>): string => `event: ${String(data['type'])}\ndata: ${JSON.stringify(data)}\n\n`;
const signal = new AbortController().signal;

async function text(stream: Readable): Promise<string> {
  let all = '';
  for await (const chunk of stream) all += (chunk as Buffer).toString('utf8');
  return all;
}

function pieces(source: string, size: number): Readable {
  const all = Buffer.from(source);
  const parts: Buffer[] = [];
  for (let offset = 0; offset < all.length; offset += size) parts.push(all.subarray(offset, offset + size));
  return Readable.from(parts);
}

describe('openNativeStream', () => {
  it.each([1, 7, 4096])('replays the bytes read ahead and the rest unchanged (cut every %i bytes)', async (size) => {
    const sse = event({ type: 'message_start', message: { id: 'msg_1' } }) + event({ type: 'ping' }) + event({ type: 'message_stop' });
    expect(await text(await openNativeStream(pieces(sse, size), 'claude', signal))).toBe(sse);
  });

  it('fails the attempt when the stream opens with an error event (overloaded -> 529, failover can act)', async () => {
    const sse = event({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } });
    const error = await openNativeStream(pieces(sse, 5), 'claude', signal).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).status).toBe(529);
    expect((error as GatewayError).provider).toBe('claude');
  });

  it('closes the upstream without an unhandled error when it fails the attempt (undici bodies error on destroy)', async () => {
    const upstream = new Readable({
      read() {},
      destroy(error, callback) {
        callback(error ?? new Error('aborted'));
      },
    });
    upstream.push(event({ type: 'error', error: { type: 'api_error', message: 'boom' } }));
    await expect(openNativeStream(upstream, 'claude', signal)).rejects.toMatchObject({ status: 500 });
    await new Promise((resolve) => setImmediate(resolve));
    expect(upstream.destroyed).toBe(true);
  });

  it('hands an empty body on (the relay reports it as cut)', async () => {
    expect(await text(await openNativeStream(Readable.from([]), 'claude', signal))).toBe('');
  });
});

describe('anthropicApiBase', () => {
  it.each([
    ['https://api.anthropic.com', 'https://api.anthropic.com/v1'],
    ['http://127.0.0.1:1234/', 'http://127.0.0.1:1234/v1'],
    ['https://api.anthropic.com/v1', 'https://api.anthropic.com/v1'],
    ['https://proxy.example/anthropic/v1/', 'https://proxy.example/anthropic/v1'],
  ])('%s -> %s', (given, expected) => {
    expect(anthropicApiBase(given)).toBe(expected);
  });
});
