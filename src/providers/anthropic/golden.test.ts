import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { ChatRequestBody } from '../provider.ts';
import { convertChatRequest } from './convert-chat-request.ts';
import { convertChatResponse, parseMessagesResponse } from './convert-chat-response.ts';
import { openConvertedStream } from './stream-body.ts';

// Recorded translations replayed through the pure functions, without a network: for each
// fixture, the OpenAI request in, the exact Anthropic request sent, the upstream answer
// (JSON or SSE events) and the exact OpenAI answer (JSON or chunks) the client gets.

interface Fixture {
  description: string;
  openai_request: ChatRequestBody;
  anthropic_request: Record<string, unknown>;
  anthropic_response?: Record<string, unknown>;
  openai_response?: Record<string, unknown>;
  anthropic_events?: { event: string; data: Record<string, unknown> }[];
  openai_chunks?: (Record<string, unknown> | '[DONE]')[];
  expected_error?: { type: string; status: number; message: string };
}

const fixtureDirectory = resolve(import.meta.dirname, '..', '..', '..', 'test', 'fixtures', 'anthropic');
const created = 1_700_000_000;
const provider = 'claude';

const fixtures = readdirSync(fixtureDirectory)
  .filter((file) => file.endsWith('.json'))
  .map((file) => [file.replace(/\.json$/, ''), JSON.parse(readFileSync(join(fixtureDirectory, file), 'utf8')) as Fixture] as const);

/** The SSE text Anthropic sends: `event:` and `data:` lines, a blank line after each event. */
function sseText(events: NonNullable<Fixture['anthropic_events']>): string {
  return events.map(({ event, data }) => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`).join('');
}

/** The bytes cut into pieces of `size` (1 = byte by byte, splitting UTF-8 sequences too). */
function pieces(text: string, size: number): Buffer[] {
  const bytes = Buffer.from(text);
  const result: Buffer[] = [];
  for (let start = 0; start < bytes.length; start += size) result.push(bytes.subarray(start, start + size));
  return result;
}

interface StreamOutcome {
  frames: (Record<string, unknown> | '[DONE]')[];
  error: unknown;
  /** False when the stream failed before its first frame (the attempt fails as a whole). */
  opened: boolean;
}

async function replayStream(fixture: Fixture, size: number, includeUsage: boolean): Promise<StreamOutcome> {
  const upstream = Readable.from(pieces(sseText(fixture.anthropic_events ?? []), size));
  const options = { provider, created, model: fixture.openai_request.model, includeUsage };
  let text = '';
  let error: unknown = null;
  let opened = false;
  try {
    const output = await openConvertedStream(upstream, options, new AbortController().signal);
    opened = true;
    for await (const chunk of output) text += (chunk as Buffer).toString('utf8');
  } catch (thrown) {
    error = thrown;
  }
  const frames = text
    .split('\n\n')
    .filter((frame) => frame !== '')
    .map((frame) => {
      expect(frame.startsWith('data: '), frame).toBe(true);
      const data = frame.slice('data: '.length);
      return data === '[DONE]' ? '[DONE]' : (JSON.parse(data) as Record<string, unknown>);
    });
  return { frames, error, opened };
}

function expectError(error: unknown, expected: NonNullable<Fixture['expected_error']>): void {
  expect(error).toBeInstanceOf(GatewayError);
  const gatewayError = error as GatewayError;
  expect({ type: gatewayError.type, status: gatewayError.status, message: gatewayError.message }).toEqual(expected);
  expect(gatewayError.provider).toBe(provider);
}

describe.each(fixtures)('anthropic golden fixture %s', (_name, fixture) => {
  it('translates the OpenAI request to the exact Anthropic request', () => {
    expect(convertChatRequest(fixture.openai_request, { provider })).toEqual(fixture.anthropic_request);
  });
});

describe.each(fixtures.filter(([, fixture]) => fixture.anthropic_response !== undefined))(
  'anthropic golden answer %s',
  (_name, fixture) => {
    it('translates the Messages answer to the exact chat completion', () => {
      const message = parseMessagesResponse(JSON.stringify(fixture.anthropic_response), provider);
      const converted = convertChatResponse(message, { created, model: fixture.openai_request.model });
      expect(JSON.parse(JSON.stringify(converted))).toEqual(fixture.openai_response);
    });
  },
);

describe.each(fixtures.filter(([, fixture]) => fixture.anthropic_events !== undefined))('anthropic golden stream %s', (_name, fixture) => {
  it.each([1, 7, 64, 1 << 20])('translates the events to the exact chunks (upstream cut every %i bytes)', async (size) => {
    const includeUsage = fixture.openai_request['stream_options'] !== undefined;
    const { frames, error, opened } = await replayStream(fixture, size, includeUsage);
    if (fixture.expected_error === undefined) expect(error).toBeNull();
    else expectError(error, fixture.expected_error);
    // An error event in the upstream's first bytes fails the attempt before any frame.
    if (opened) expect(frames).toEqual(fixture.openai_chunks);
    else expect(frames).toEqual([]);
  });

  it('leaves the usage chunk out when the client did not ask for it', async () => {
    const { frames } = await replayStream(fixture, 64, false);
    const withoutUsage = (fixture.openai_chunks ?? []).filter((chunk) => chunk === '[DONE]' || !('usage' in chunk));
    expect(frames).toEqual(withoutUsage);
  });
});
