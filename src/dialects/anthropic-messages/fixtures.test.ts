import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SseParser } from '../../streaming/sse-parser.ts';
import { toChatRequest } from './convert-request.ts';
import { toMessagesResponse } from './convert-response.ts';
import { translateCapturedStream } from './stream-renderer.ts';
import { MessagesStreamTranslator, type StreamTranslatorOptions } from './stream-translator.ts';

// Golden fixtures (test/fixtures/messages/), replayed without a network: a Messages request
// and the chat request it becomes; a chat completion and the Messages response it becomes;
// an OpenAI chunk sequence and the Anthropic event sequence it becomes.

const root = resolve(import.meta.dirname, '..', '..', '..', 'test', 'fixtures', 'messages');

function fixtures<T>(folder: string): [string, T][] {
  const directory = join(root, folder);
  const names = readdirSync(directory).filter((name) => name.endsWith('.json'));
  expect(names.length).toBeGreaterThan(0);
  return names.map((name) => [name.replace(/\.json$/, ''), JSON.parse(readFileSync(join(directory, name), 'utf8')) as T]);
}

interface RequestFixture {
  messages_request: unknown;
  chat_request: unknown;
}

interface ResponseFixture {
  chat_response: unknown;
  messages_response: unknown;
}

interface StreamFixture {
  options: StreamTranslatorOptions;
  /** Chunk objects, or the literal `[DONE]`. */
  chunks: unknown[];
  events: { event: string; data: { type: string } }[];
}

describe('golden Messages requests -> chat requests', () => {
  it.each(fixtures<RequestFixture>('requests'))('%s', (_name, fixture) => {
    expect(toChatRequest(fixture.messages_request).chat).toEqual(fixture.chat_request);
  });
});

describe('golden chat responses -> Messages responses', () => {
  it.each(fixtures<ResponseFixture>('responses'))('%s', (_name, fixture) => {
    expect(toMessagesResponse(JSON.stringify(fixture.chat_response), 'requested-model', 'req-1')).toEqual(fixture.messages_response);
  });
});

describe('golden chat chunk sequences -> Messages event sequences', () => {
  it.each(fixtures<StreamFixture>('streams'))('%s', (_name, fixture) => {
    const sse = fixture.chunks.map((chunk) => `data: ${typeof chunk === 'string' ? chunk : JSON.stringify(chunk)}\n\n`).join('');
    const output = translateCapturedStream(sse, new MessagesStreamTranslator(fixture.options));
    const parser = new SseParser();
    const events = [...parser.push(Buffer.from(output)), ...parser.finish()];
    const parsed = events.map((event) => ({ event: event.event, data: JSON.parse(event.data) as { type: string } }));
    expect(parsed).toEqual(fixture.events);
    // Anthropic's framing: every event is named, and the name is the payload's type.
    for (const event of parsed) expect(event.event).toBe(event.data.type);
  });
});
