import { readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.ts';
import { openConvertedStream } from './stream-body.ts';

const fixtureText = (name: string): string => readFileSync(new URL(`../../../test/fixtures/gemini/${name}`, import.meta.url), 'utf8');
const options = { provider: 'gemini', created: 1, model: 'gemini-2.5-flash', includeUsage: true };

async function drain(stream: Readable): Promise<{ chunks: Array<Record<string, unknown>>; done: boolean; error: unknown }> {
  let output = '';
  let error: unknown = null;
  try {
    for await (const chunk of stream) output += (chunk as Buffer).toString();
  } catch (caught) {
    error = caught;
  }
  const datas = output
    .split('\n\n')
    .filter((frame) => frame.startsWith('data: '))
    .map((frame) => frame.slice(6));
  const chunks = datas.filter((data) => data !== '[DONE]').map((data) => JSON.parse(data) as Record<string, unknown>);
  return { chunks, done: datas.at(-1) === '[DONE]', error };
}

/** The upstream body cut into pieces of `size` bytes, as a network delivers it. */
async function convert(body: string, size = 17, extra: Partial<typeof options> = {}): Promise<Awaited<ReturnType<typeof drain>>> {
  const bytes = Buffer.from(body);
  const pieces: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += size) pieces.push(bytes.subarray(at, at + size));
  return drain(await openConvertedStream(Readable.from(pieces), { ...options, ...extra }, new AbortController().signal));
}

const deltas = (chunks: Array<Record<string, unknown>>): unknown[] =>
  chunks.flatMap((chunk) => (chunk['choices'] as Array<Record<string, unknown>>).map((choice) => choice['delta']));

describe('GeminiStreamConverter', () => {
  it('streams thoughts, text, the finish chunk with safety ratings and a final usage chunk', async () => {
    const { chunks, done, error } = await convert(fixtureText('stream-text.sse'));
    expect(error).toBeNull();
    expect(done).toBe(true);
    expect(deltas(chunks.slice(0, -1))).toEqual([
      { role: 'assistant', content: '' },
      { reasoning_content: '**Planning the answer**\n\nA short greeting is enough.' },
      { content: 'Hello' },
      { content: ' there!' },
      {},
    ]);
    const finish = (chunks.at(-2)?.['choices'] as Array<Record<string, unknown>>)[0];
    expect(finish).toMatchObject({
      finish_reason: 'stop',
      safety_ratings: [{ category: 'HARM_CATEGORY_HARASSMENT', probability: 'NEGLIGIBLE' }],
    });
    expect(chunks[0]).toMatchObject({ id: 'chatcmpl-vMQkaYHOJ9Gqz7IP6ZbOsQw', object: 'chat.completion.chunk', model: 'gemini-2.5-flash' });
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 8, completion_tokens: 35, total_tokens: 43, completion_tokens_details: { reasoning_tokens: 32 } },
    });
  });

  it('streams a function call as one tool_calls delta and finishes with tool_calls', async () => {
    const { chunks, error } = await convert(fixtureText('stream-tools.sse'), 5, { includeUsage: false });
    expect(error).toBeNull();
    const call = deltas(chunks)[1] as { tool_calls: Array<Record<string, unknown>> };
    expect(call.tool_calls[0]).toMatchObject({
      index: 0,
      type: 'function',
      function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
      extra_content: { google: { thought_signature: 'CiQBVKhc7sigAbCdEf' } },
    });
    expect((chunks.at(-1)?.['choices'] as Array<Record<string, unknown>>)[0]?.['finish_reason']).toBe('tool_calls');
    expect(chunks.some((chunk) => chunk['usage'] !== undefined)).toBe(false);
  });

  it('fails a stream cut before its finish reason, after the chunks already sent', async () => {
    const first = fixtureText('stream-text.sse').split('\r\n\r\n')[0] ?? '';
    const { chunks, done, error } = await convert(`${first}\r\n\r\n`);
    expect(chunks.length).toBeGreaterThan(0);
    expect(done).toBe(false);
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).message).toMatch(/before a finish reason/);
    expect((error as GatewayError).code).toBe('upstream_stream_incomplete');
  });

  it('throws an error event as the mapped upstream error, before any chunk', async () => {
    const event = `data: ${fixtureText('error-429.json').replace(/\s*\n\s*/g, '')}\r\n\r\n`;
    await expect(openConvertedStream(Readable.from([Buffer.from(event)]), options, new AbortController().signal)).rejects.toMatchObject({
      type: 'rate_limit_error',
      status: 429,
      message: expect.stringMatching(/exceeded your current quota/),
    });
  });

  it('ends a blocked prompt with a content_filter choice', async () => {
    const blocked = JSON.parse(fixtureText('blocked-prompt-response.json')) as unknown;
    const { chunks, done } = await convert(`data: ${JSON.stringify(blocked)}\r\n\r\n`);
    expect(done).toBe(true);
    expect((chunks[1]?.['choices'] as Array<Record<string, unknown>>)[0]?.['finish_reason']).toBe('content_filter');
  });
});
