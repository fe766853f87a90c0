import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SseParser } from '../../streaming/sse-parser.ts';
import type { ChatRequestBody } from '../provider.ts';
import { fromGenerateContent, toGenerateContent } from './gemini-minimal.ts';
import { GeminiMinimalStream } from './gemini-minimal-stream.ts';

const fixture = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../../../test/fixtures/vertex/${name}`, import.meta.url), 'utf8')) as Record<string, unknown>;
const created = 1750000000;

describe('minimal Gemini converters', () => {
  it('turns an OpenAI chat request into a generateContent body', () => {
    const { chat, generateContent } = fixture('generate-content.json');
    expect(toGenerateContent(chat as ChatRequestBody, 'vx')).toEqual(generateContent);
  });

  it.each(['response-text.json', 'response-tool-call.json'])('turns the answer of %s into a chat completion', (name) => {
    const { upstream, expected } = fixture(name);
    expect(fromGenerateContent(JSON.stringify(upstream), { provider: 'vx', created, model: 'gemini-2.5-flash' })).toEqual(expected);
  });

  it('maps finish reasons and refuses remote image URLs', () => {
    const answer = { candidates: [{ content: { parts: [{ text: 'cut' }] }, finishReason: 'MAX_TOKENS' }] };
    const converted = fromGenerateContent(JSON.stringify(answer), { provider: 'vx', created, model: 'm' });
    expect((converted['choices'] as { finish_reason: string }[])[0]?.finish_reason).toBe('length');
    const blocked = fromGenerateContent(JSON.stringify({ promptFeedback: { blockReason: 'SAFETY' } }), {
      provider: 'vx',
      created,
      model: 'm',
    });
    expect((blocked['choices'] as { finish_reason: string }[])[0]?.finish_reason).toBe('content_filter');
    const remote = { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } };
    expect(() => toGenerateContent({ model: 'm', messages: [{ role: 'user', content: [remote] }] }, 'vx')).toThrow(/data-URL/);
  });

  it('translates an SSE stream into chunks, usage last', () => {
    const parser = new SseParser();
    const stream = new GeminiMinimalStream({ provider: 'vx', created, model: 'gemini-2.5-flash', includeUsage: true });
    const text =
      stream.push(parser.push(readFileSync(new URL('../../../test/fixtures/vertex/stream-text.sse', import.meta.url)))) + stream.finish();
    const frames = text.split('\n\n').filter((frame) => frame !== '');
    expect(frames.at(-1)).toBe('data: [DONE]');
    const chunks = frames.slice(0, -1).map((frame) => JSON.parse(frame.slice('data: '.length)) as Record<string, unknown>);
    const deltas = chunks.flatMap((chunk) =>
      (chunk['choices'] as { delta: { content?: string } }[]).map((choice) => choice.delta.content ?? ''),
    );
    expect(deltas.join('')).toBe('Hello there!');
    expect(chunks[0]?.['id']).toBe('chatcmpl-stream-1');
    expect(chunks.at(-1)?.['usage']).toMatchObject({ prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 });
    expect(chunks.at(-2)?.['choices']).toEqual([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]);
  });

  it('throws an error event mapped by its code, and a stream cut before its finish reason', () => {
    const parser = new SseParser();
    const error = readFileSync(new URL('../../../test/fixtures/vertex/error-resource-exhausted.json', import.meta.url), 'utf8');
    const stream = new GeminiMinimalStream({ provider: 'vx', created, model: 'm', includeUsage: false });
    expect(() => stream.push(parser.push(Buffer.from(`data: ${JSON.stringify(JSON.parse(error))}\n\n`)))).toThrow(/Resource exhausted/);
    const cut = new GeminiMinimalStream({ provider: 'vx', created, model: 'm', includeUsage: false });
    cut.push(new SseParser().push(Buffer.from('data: {"candidates":[{"content":{"parts":[{"text":"Hi"}]}}]}\n\n')));
    expect(() => cut.finish()).toThrow(/before a finish reason/);
  });
});
