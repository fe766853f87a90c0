import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { SseParser } from '../../streaming/sse-parser.ts';
import { toGenerateContentRequest } from '../gemini/convert-chat-request.ts';
import { fromGenerateContentResponse, parseGenerateContentResponse } from '../gemini/convert-chat-response.ts';
import { GeminiStreamConverter } from '../gemini/convert-stream.ts';

// Vertex speaks Gemini's generateContent with a few fields of its own (createTime,
// avgLogprobs, trafficType, safety scores): these fixtures of Vertex answers go through the
// native Gemini converters the vertex adapter uses.

type Json = Record<string, unknown>;
const fixturePath = (name: string): URL => new URL(`../../../test/fixtures/vertex/${name}`, import.meta.url);
const fixture = (name: string): Json => JSON.parse(readFileSync(fixturePath(name), 'utf8')) as Json;
const created = 1750000000;

function streamed(body: Buffer | string, includeUsage: boolean): Json[] {
  const parser = new SseParser();
  const converter = new GeminiStreamConverter({ provider: 'vx', created, model: 'gemini-2.5-flash', includeUsage });
  const text = converter.push(parser.push(Buffer.from(body))) + converter.push(parser.finish()) + converter.finish();
  const frames = text.split('\n\n').filter((frame) => frame !== '');
  expect(frames.at(-1)).toBe('data: [DONE]');
  return frames.slice(0, -1).map((frame) => JSON.parse(frame.slice('data: '.length)) as Json);
}

describe('Vertex wire through the Gemini converters', () => {
  it('turns an OpenAI chat request into the generateContent body', () => {
    const { chat, generateContent } = fixture('generate-content.json');
    expect(toGenerateContentRequest(chat as Json)).toEqual(generateContent);
  });

  it('keeps thoughts, safety ratings and cached/thinking usage of a Vertex answer', () => {
    const { upstream, expected } = fixture('response-text.json');
    const answer = parseGenerateContentResponse(JSON.stringify(upstream), 'vx');
    expect(fromGenerateContentResponse(answer, 'gemini-2.5-flash', { created })).toEqual(expected);
  });

  it('answers a function call as tool_calls with a generated id', () => {
    const { upstream, expected } = fixture('response-tool-call.json');
    const answer = fromGenerateContentResponse(upstream as Json, 'gemini-2.5-flash', { created });
    const choices = answer['choices'] as { message: { tool_calls: { id: string }[] } }[];
    expect(choices[0]?.message.tool_calls[0]?.id).toMatch(/^call_[0-9a-f]{24}$/);
    const expectedChoices = (expected as { choices: { message: { tool_calls: Json[] } }[] }).choices;
    for (const call of expectedChoices[0]?.message.tool_calls ?? []) call['id'] = choices[0]?.message.tool_calls[0]?.id;
    expect(answer).toEqual(expected);
  });

  it('translates a Vertex SSE stream into chunks, usage last', () => {
    const chunks = streamed(readFileSync(fixturePath('stream-text.sse')), true);
    const deltas = chunks.flatMap((chunk) =>
      (chunk['choices'] as { delta: { content?: string } }[]).map((choice) => choice.delta.content ?? ''),
    );
    expect(deltas.join('')).toBe('Hello there!');
    expect(chunks[0]?.['id']).toBe('chatcmpl-stream-1');
    expect(chunks.at(-1)?.['usage']).toMatchObject({ prompt_tokens: 5, completion_tokens: 3, total_tokens: 8 });
    expect(chunks.at(-2)?.['choices']).toEqual([{ index: 0, delta: {}, logprobs: null, finish_reason: 'stop' }]);
  });

  it('throws an error event mapped by its code, and a stream cut before its finish reason', () => {
    const error = JSON.stringify(fixture('error-resource-exhausted.json'));
    expect(() => streamed(`data: ${error}\n\n`, false)).toThrow(/Resource exhausted/);
    expect(() => streamed('data: {"candidates":[{"content":{"parts":[{"text":"Hi"}]}}]}\n\n', false)).toThrow(/before a finish reason/);
  });
});
