import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.ts';
import { responseFromChat } from './from-chat-response.ts';
import type { ResponseSeed } from './response-object.ts';
import { nativePassthrough, translatedChatStream } from './stream-translators.ts';
import { toChatRequest } from './to-chat-request.ts';
import { meteredUsageOf } from './usage.ts';

// Golden fixtures (test/fixtures/responses/): Responses requests -> chat requests, chat
// completions -> Response objects, chat SSE transcripts -> Responses event streams.

const fixtures = join(import.meta.dirname, '..', '..', '..', 'test', 'fixtures', 'responses');
const text = (name: string): string => readFileSync(join(fixtures, name), 'utf8');
const json = (name: string): Record<string, unknown> => JSON.parse(text(name)) as Record<string, unknown>;
const seedFor = (request: Record<string, unknown>): ResponseSeed => ({
  idBase: 'golden',
  createdAt: 1700000000,
  model: 'mock-model',
  provider: 'compat',
  request,
});

/** Feeds an SSE transcript in 37-byte pieces (framing split anywhere) and collects the output. */
function translateStream(transcript: string): string {
  const translator = translatedChatStream(seedFor({ model: 'mock-model', input: 'hi', stream: true }));
  const bytes = Buffer.from(transcript);
  let out = translator.start();
  for (let start = 0; start < bytes.length; start += 37) out += String(translator.push(bytes.subarray(start, start + 37)));
  return out + translator.end();
}

/** The JSON payloads of a Responses event stream, checking each `event:` name matches its type. */
function eventsOf(stream: string): Record<string, unknown>[] {
  return stream
    .split('\n\n')
    .filter((frame) => frame !== '')
    .map((frame) => {
      const [eventLine, dataLine] = frame.split('\n');
      const event = JSON.parse((dataLine ?? '').slice('data: '.length)) as Record<string, unknown>;
      expect(eventLine).toBe(`event: ${String(event['type'])}`);
      return event;
    });
}

describe('Responses request -> chat request (golden)', () => {
  it.each(['request-text', 'request-items'])('%s', (name) => {
    expect(toChatRequest(json(`${name}.json`), 'mock-model', 'compat')).toEqual(json(`${name}.chat.json`));
  });

  it('refuses what a chat upstream cannot honour, naming the field and the provider', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ input: 'hi', previous_response_id: 'resp_1' }, 'previous_response_id'],
      [{ input: 'hi', tools: [{ type: 'web_search' }] }, 'tools'],
      [{ input: [{ type: 'item_reference', id: 'msg_1' }] }, 'input'],
      [{ input: 'hi', text: { format: { type: 'grammar' } } }, 'text'],
    ];
    for (const [request, param] of cases) {
      const error = (() => {
        try {
          toChatRequest(request, 'm', 'compat');
        } catch (thrown) {
          return thrown;
        }
        return null;
      })();
      expect(error).toBeInstanceOf(GatewayError);
      expect(error).toMatchObject({ status: 400, code: 'unsupported_parameter', param });
      expect((error as Error).message).toContain('compat');
    }
  });

  it('asks for input, and takes a bare string as one user message', () => {
    expect(() => toChatRequest({}, 'm', 'compat')).toThrow(/input/);
    expect(toChatRequest({ input: 'hi' }, 'm', 'compat')).toEqual({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
  });
});

describe('chat completion -> Response object (golden)', () => {
  it.each([
    ['chat-text', 'request-text.json'],
    ['chat-tool', 'request-items.json'],
  ])('%s', (name, requestName) => {
    expect(responseFromChat(json(`${name}.json`), seedFor(json(requestName)))).toEqual(json(`${name}.response.json`));
  });

  it('chat-length: a length stop is an incomplete response', () => {
    const request = { model: 'mock-model', input: 'Tell a story', max_output_tokens: 3 };
    expect(responseFromChat(json('chat-length.json'), seedFor(request))).toEqual(json('chat-length.response.json'));
  });
});

describe('chat stream -> Responses events (golden)', () => {
  it.each(['chat-stream-text', 'chat-stream-tool'])('%s', (name) => {
    const out = translateStream(text(`${name}.sse`));
    expect(out).toBe(text(`${name}.events.sse`));
    const events = eventsOf(out);
    expect(events.map((event) => event['sequence_number'])).toEqual(events.map((_event, index) => index));
    expect(events[0]?.['type']).toBe('response.created');
    expect(events.at(-1)?.['type']).toBe('response.completed');
  });

  it('the text stream carries the whole text and usage in response.completed', () => {
    const completed = eventsOf(text('chat-stream-text.events.sse')).at(-1)?.['response'] as Record<string, unknown>;
    expect(completed['output']).toEqual([
      {
        id: 'msg_golden',
        type: 'message',
        status: 'completed',
        content: [{ type: 'output_text', annotations: [], logprobs: [], text: 'Hello from mock' }],
        role: 'assistant',
      },
    ]);
    expect(completed['usage']).toMatchObject({ input_tokens: 12, output_tokens: 3, total_tokens: 15 });
  });

  it('an in-band upstream error ends the stream with an error event', () => {
    const translator = translatedChatStream(seedFor({ input: 'hi' }));
    translator.start();
    expect(() => translator.push(Buffer.from('data: {"error":{"message":"overloaded"}}\n\n'))).toThrow(/overloaded/);
    const frame = translator.fail(new GatewayError('provider_error', 'overloaded', { provider: 'compat', code: 'upstream_error' }));
    const [event] = eventsOf(frame);
    expect(event).toMatchObject({ type: 'error', code: 'upstream_error', message: 'overloaded', error: { provider: 'compat' } });
  });
});

describe('native passthrough', () => {
  it('relays bytes untouched and meters the usage of response.completed', () => {
    const translator = nativePassthrough('openai');
    const usage = {
      input_tokens: 10,
      input_tokens_details: { cached_tokens: 6 },
      output_tokens: 4,
      output_tokens_details: { reasoning_tokens: 1 },
      total_tokens: 14,
    };
    const body =
      'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":3,"delta":"Hi"}\n\n' +
      `event: response.completed\ndata: ${JSON.stringify({ type: 'response.completed', sequence_number: 4, response: { usage } })}\n\n`;
    const chunk = Buffer.from(body);
    // Whole events at a time: the first 50 bytes end inside one, held back until its end.
    expect(translator.push(chunk.subarray(0, 50))).toEqual(Buffer.alloc(0));
    expect(translator.push(chunk.subarray(50))).toEqual(chunk);
    expect(translator.end()).toBe('');
    expect(translator.usage()).toEqual(meteredUsageOf(usage));
    expect(translator.usage()).toMatchObject({
      prompt_tokens: 10,
      completion_tokens: 4,
      total_tokens: 14,
      prompt_tokens_details: { cached_tokens: 6 },
    });
  });

  it('holds back a cut-off event and fails a stream that ends before its terminal event', () => {
    const translator = nativePassthrough('openai');
    const whole = 'event: response.output_text.delta\ndata: {"type":"response.output_text.delta","delta":"Hi"}\n\n';
    expect(String(translator.push(Buffer.from(whole + 'event: response.output_text.delta\ndata: {"type":"resp')))).toBe(whole);
    expect(() => translator.end()).toThrow(expect.objectContaining({ code: 'upstream_stream_incomplete', provider: 'openai' }));
  });
});

describe('translated chat stream end', () => {
  it('fails a chat stream that ends without a finish reason or [DONE]', () => {
    const translator = translatedChatStream(seedFor({ input: 'hi' }));
    translator.start();
    translator.push(Buffer.from('data: {"choices":[{"index":0,"delta":{"content":"Hi"},"finish_reason":null}]}\n\ndata: {"choi'));
    expect(() => translator.end()).toThrow(expect.objectContaining({ code: 'upstream_stream_incomplete', provider: 'compat' }));
  });
});
