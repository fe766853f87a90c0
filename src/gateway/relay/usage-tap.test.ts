import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { TopLevelFields } from './json-fields.ts';
import { UsageTap } from './usage-tap.ts';

const pieces = (body: string | Buffer, size: number): Buffer[] => {
  const bytes = Buffer.from(body);
  const chunks: Buffer[] = [];
  for (let start = 0; start < bytes.length; start += size) chunks.push(bytes.subarray(start, start + size));
  return chunks;
};

async function tapped(body: string | Buffer, headers: Record<string, string>, size = 7): Promise<{ relayed: Buffer; tap: UsageTap }> {
  const tap = UsageTap.for(headers);
  const relayed = Buffer.concat(pieces(body, size).map((piece) => tap.push(piece)));
  await tap.settle();
  return { relayed, tap };
}

const json = { 'content-type': 'application/json' };
const sse = { 'content-type': 'text/event-stream' };

describe('TopLevelFields', () => {
  it('reads only the wanted top-level values, in any chunking, whatever is nested or quoted', () => {
    const body = JSON.stringify({
      data: [{ usage: { nested: true }, text: 'a "usage": {"x":1}, } ] {' }],
      model: 'm-1',
      'us\\"age': 1,
      usage: { prompt_tokens: 3, completion_tokens: 4 },
    });
    for (const size of [1, 2, 5, 64, body.length]) {
      const fields = new TopLevelFields(['usage', 'model']);
      for (const piece of pieces(body, size)) fields.push(piece);
      expect(fields.complete).toBe(true);
      expect(JSON.parse(fields.values.get('usage') ?? 'null')).toEqual({ prompt_tokens: 3, completion_tokens: 4 });
      expect(fields.values.get('model')).toBe('"m-1"');
    }
  });

  it('reads past long strings, runs of escapes and many short strings alike', () => {
    const body = JSON.stringify({
      b64: 'A'.repeat(300_000),
      escapes: '\\"'.repeat(100_000),
      words: Array.from({ length: 50_000 }, (_, index) => `w${index}`),
      usage: { total_tokens: 7 },
    });
    for (const size of [3, 4096, 65_536]) {
      const fields = new TopLevelFields(['usage']);
      for (const piece of pieces(body, size)) fields.push(piece);
      expect(fields.values.get('usage')).toBe('{"total_tokens":7}');
    }
  });

  it('drops a value over its bound and gives up on what is not an object', () => {
    const fields = new TopLevelFields(['usage'], 16);
    fields.push(Buffer.from(`{"usage":{"pad":"${'x'.repeat(64)}"}}`));
    expect(fields.complete).toBe(true);
    expect(fields.values.has('usage')).toBe(false);
    for (const body of ['[{"usage":1}]', '"usage"', 'not json']) {
      const other = new TopLevelFields(['usage']);
      other.push(Buffer.from(body));
      expect(other.complete).toBe(false);
    }
  });
});

describe('UsageTap', () => {
  it('reads the Responses id of a JSON answer or of a stream response.created, and runs beforeEnd once read', async () => {
    const answer = JSON.stringify({ id: 'resp_1', object: 'response', output: [{ id: 'msg_1' }], usage: { input_tokens: 1 } });
    const created = { type: 'response.created', response: { id: 'resp_2', output: [] } };
    const stream = `event: response.created\ndata: ${JSON.stringify(created)}\n\nevent: response.completed\ndata: {"type":"response.completed","response":{"id":"resp_2","usage":{"input_tokens":1}}}\n\n`;
    for (const [body, headers, id] of [
      [answer, json, 'resp_1'],
      [stream, sse, 'resp_2'],
      ['{"object":"list","data":[{"id":"x"}]}', json, null],
      ['data: {"type":"response.in_progress","response":{"id":"resp_3"}}\n\n', sse, null],
    ] as const) {
      const tap = UsageTap.for(headers);
      const seen: (string | null)[] = [];
      tap.beforeEnd = async (read) => void seen.push(read.responseId());
      for (const piece of pieces(body, 5)) tap.push(piece);
      await tap.settle();
      expect(seen).toEqual([id]);
    }
  });

  it('reads the usage at the end of a JSON answer over 1 MiB, relaying it unchanged', async () => {
    const body = JSON.stringify({
      data: [{ embedding: Array.from({ length: 200_000 }, () => 0.123456) }],
      model: 'e',
      usage: { prompt_tokens: 9 },
    });
    expect(body.length).toBeGreaterThan(1024 * 1024);
    const { relayed, tap } = await tapped(body, json, 65_536);
    expect(relayed.toString()).toBe(body);
    expect(tap.relayed).toBe(Buffer.byteLength(body));
    expect(tap.summary()).toEqual({ usage: { prompt_tokens: 9 }, model: 'e' });
  });

  it('reads a gzip answer on a decompressed copy', async () => {
    const body = gzipSync(JSON.stringify({ model: 'g', usage: { prompt_tokens: 1, completion_tokens: 2 } }));
    const { relayed, tap } = await tapped(body, { ...json, 'content-encoding': 'gzip' });
    expect(relayed.equals(body)).toBe(true);
    expect(tap.summary().usage).toEqual({ prompt_tokens: 1, completion_tokens: 2 });
  });

  it('reads Gemini usageMetadata and Anthropic cache counts into the metered shape', async () => {
    const gemini = await tapped(JSON.stringify({ candidates: [], usageMetadata: { promptTokenCount: 5, candidatesTokenCount: 6 } }), json);
    expect(gemini.tap.summary().usage).toMatchObject({ prompt_tokens: 5, completion_tokens: 6, total_tokens: 11 });
    const anthropic = await tapped(JSON.stringify({ usage: { input_tokens: 2, cache_read_input_tokens: 8, output_tokens: 3 } }), json);
    expect(anthropic.tap.summary().usage).toMatchObject({
      prompt_tokens: 10,
      completion_tokens: 3,
      prompt_tokens_details: { cached_tokens: 8 },
    });
  });

  it('reads the usage of OpenAI, Anthropic, Responses and Gemini event streams', async () => {
    const streams: Array<[string, Record<string, unknown>]> = [
      [
        'data: {"choices":[{"delta":{"content":"hi"}}],"usage":null}\n\ndata: {"choices":[],"usage":{"prompt_tokens":4,"completion_tokens":5}}\n\ndata: [DONE]\n\n',
        { prompt_tokens: 4, completion_tokens: 5 },
      ],
      [
        'event: message_start\ndata: {"type":"message_start","message":{"model":"c","usage":{"input_tokens":7,"output_tokens":1}}}\n\n' +
          'event: message_delta\ndata: {"type":"message_delta","usage":{"output_tokens":12}}\n\n',
        { input_tokens: 7, output_tokens: 12 },
      ],
      [
        'event: response.completed\ndata: {"type":"response.completed","response":{"usage":{"input_tokens":3,"output_tokens":2}}}\n\n',
        { input_tokens: 3, output_tokens: 2 },
      ],
      [
        'data: {"usageMetadata":{"promptTokenCount":2,"candidatesTokenCount":1}}\n\ndata: {"usageMetadata":{"promptTokenCount":2,"candidatesTokenCount":9}}\n\n',
        { prompt_tokens: 2, completion_tokens: 9 },
      ],
    ];
    for (const [body, usage] of streams) {
      const { relayed, tap } = await tapped(body, sse, 3);
      expect(relayed.toString()).toBe(body);
      expect(tap.summary().usage).toMatchObject(usage);
    }
  });

  it('counts the bytes of an answer it cannot read, and has no usage for it', async () => {
    const { tap } = await tapped(Buffer.alloc(1000, 1), { 'content-type': 'audio/mpeg' });
    expect(tap.relayed).toBe(1000);
    expect(tap.summary().usage).toBeNull();
    const broken = await tapped(Buffer.from('not gzip at all'), { ...json, 'content-encoding': 'gzip' });
    expect(broken.relayed.toString()).toBe('not gzip at all');
    expect(broken.tap.summary().usage).toBeNull();
  });
});
