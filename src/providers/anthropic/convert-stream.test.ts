import { PassThrough, Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.ts';
import { mapUpstreamError } from '../upstream-errors.ts';
import { mapFinishReason } from './convert-chat-response.ts';
import { parseModelPage } from './parse-model-list.ts';
import { openConvertedStream } from './stream-body.ts';

const options = { provider: 'claude', created: 1, model: 'claude-x', includeUsage: true };
const start = { type: 'message_start', message: { id: 'msg_1', model: 'claude-x-1', usage: { input_tokens: 3, output_tokens: 1 } } };
const text = { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } };

function sse(...events: unknown[]): string {
  return events.map((event) => `event: ${(event as { type: string }).type}\ndata: ${JSON.stringify(event)}\n\n`).join('');
}

async function drain(stream: Readable): Promise<{ text: string; error: unknown }> {
  let output = '';
  try {
    for await (const chunk of stream) output += (chunk as Buffer).toString();
    return { text: output, error: null };
  } catch (error) {
    return { text: output, error };
  }
}

async function open(...parts: string[]): Promise<Readable> {
  return openConvertedStream(Readable.from(parts.map((part) => Buffer.from(part))), options, new AbortController().signal);
}

describe('openConvertedStream', () => {
  it('fails the stream when the upstream ends before message_delta', async () => {
    const { text: output, error } = await drain(await open(sse(start), sse(text)));
    expect(output).toContain('"content":"Hi"');
    expect(error).toBeInstanceOf(GatewayError);
    expect((error as GatewayError).code).toBe('invalid_upstream_response');
    expect((error as GatewayError).status).toBe(502);
  });

  it('ends normally when only message_stop is missing after message_delta', async () => {
    const delta = { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } };
    const { text: output, error } = await drain(await open(sse(start, text), sse(delta)));
    expect(error).toBeNull();
    expect(output).toMatch(/"finish_reason":"stop".*"usage":\{"prompt_tokens":3,"completion_tokens":2,.*data: \[DONE\]\n\n$/s);
  });

  it('ignores events after message_stop and unknown event types', async () => {
    const { text: output } = await drain(
      await open(sse(start, { type: 'future_event' }, { type: 'message_delta', delta: {} }, { type: 'message_stop' }, text)),
    );
    expect(output.endsWith('data: [DONE]\n\n')).toBe(true);
    expect(output).not.toContain('"content":"Hi"');
  });

  it.each([
    ['rate_limit_error', 'rate_limit_error', 429],
    ['overloaded_error', 'provider_error', 529],
    ['api_error', 'provider_error', 500],
    ['invalid_request_error', 'invalid_request_error', 400],
    ['something_new', 'provider_error', 502],
  ])('rejects before the first frame on a leading %s event', async (anthropicType, type, status) => {
    const failure = { type: 'error', error: { type: anthropicType, message: `upstream says ${anthropicType}` } };
    const error = await open(sse(failure)).then(
      () => null,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(GatewayError);
    expect(error).toMatchObject({ type, status, message: `upstream says ${anthropicType}`, provider: 'claude' });
  });

  it('rejects an event that is not JSON', async () => {
    const error = await open('event: message_start\ndata: {not json\n\n').catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ code: 'invalid_upstream_response', provider: 'claude' });
  });

  it('releases the upstream when the consumer stops reading', async () => {
    const upstream = new PassThrough();
    upstream.write(sse(start));
    const output = await openConvertedStream(upstream, options, new AbortController().signal);
    for await (const _chunk of output) break;
    await new Promise((resolve) => setImmediate(resolve));
    expect(upstream.destroyed).toBe(true);
  });
});

describe('mapFinishReason', () => {
  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    [null, 'stop'],
  ])('maps %s to %s', (reason, expected) => {
    expect(mapFinishReason(reason)).toBe(expected);
  });
});

describe('parseModelPage', () => {
  it('reads ids, created_at as Unix seconds and the next page', () => {
    const page = {
      data: [
        { type: 'model', id: 'claude-sonnet-4-5-20250929', display_name: 'Claude Sonnet 4.5', created_at: '2025-09-29T00:00:00Z' },
        { type: 'model', id: 'claude-undated', created_at: 'not a date' },
        { type: 'model', id: '' },
      ],
      has_more: true,
      first_id: 'claude-sonnet-4-5-20250929',
      last_id: 'claude-undated',
    };
    expect(parseModelPage(JSON.stringify(page))).toEqual({
      models: [{ id: 'claude-sonnet-4-5-20250929', created: 1759104000 }, { id: 'claude-undated' }],
      next: 'claude-undated',
    });
    expect(parseModelPage('{"data":[],"has_more":false,"last_id":null}')).toEqual({ models: [], next: null });
    expect(parseModelPage('{"models":[]}')).toBeNull();
  });
});

describe('Anthropic error bodies', () => {
  it('keep their message when mapped', () => {
    const body = JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' }, request_id: 'req_1' });
    expect(mapUpstreamError(529, body, 'claude')).toMatchObject({ type: 'provider_error', status: 529, message: 'Overloaded' });
    expect(mapUpstreamError(401, body.replace('Overloaded', 'invalid x-api-key'), 'claude').message).toBe('invalid x-api-key');
  });
});
