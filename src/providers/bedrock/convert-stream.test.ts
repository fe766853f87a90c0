import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

import { GatewayError } from '../../errors/gateway-error.ts';
import { BedrockStreamConverter } from './convert-stream.ts';
import { EventStreamDecoder, encodeFrame } from './event-stream.ts';

interface FixtureEvent {
  event: string;
  payload: unknown;
}

const fixture = (name: string): FixtureEvent[] =>
  JSON.parse(readFileSync(new URL(`../../../test/fixtures/bedrock/${name}`, import.meta.url), 'utf8')) as FixtureEvent[];

const eventFrame = (event: string, payload: unknown): Buffer =>
  encodeFrame({ ':event-type': event, ':content-type': 'application/json', ':message-type': 'event' }, JSON.stringify(payload));

const options = { provider: 'aws', id: 'chatcmpl-1', created: 1_700_000_000, model: 'm', includeUsage: true };

/** Feeds the bytes in small slices (frames cut anywhere) and returns the OpenAI chunks. */
function run(bytes: Buffer, sliceBytes = 7): Record<string, unknown>[] {
  const decoder = new EventStreamDecoder('aws');
  const converter = new BedrockStreamConverter(options);
  let text = '';
  for (let offset = 0; offset < bytes.length; offset += sliceBytes)
    text += converter.push(decoder.push(bytes.subarray(offset, offset + sliceBytes)));
  decoder.finish();
  text += converter.finish();
  expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
  return text
    .split('\n\n')
    .filter((frame) => frame !== '' && frame !== 'data: [DONE]')
    .map((frame) => JSON.parse(frame.slice('data: '.length)) as Record<string, unknown>);
}

const deltas = (chunks: Record<string, unknown>[]): unknown[] =>
  chunks.flatMap((chunk) => (chunk['choices'] as { delta: unknown }[]).map((choice) => choice.delta));

describe('BedrockStreamConverter', () => {
  it('converts a text stream with cache usage, frames split at any byte', () => {
    const bytes = Buffer.concat(fixture('converse-stream-text.json').map((item) => eventFrame(item.event, item.payload)));
    const chunks = run(bytes);
    expect(deltas(chunks)).toEqual([{ role: 'assistant', content: '' }, { content: 'Hello' }, { content: ' there' }, {}]);
    expect((chunks.at(-2)?.['choices'] as { finish_reason: string }[])[0]?.finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: { prompt_tokens: 142, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 30 } },
    });
  });

  it('converts tool calls, a call without input getting {}', () => {
    const bytes = Buffer.concat(fixture('converse-stream-tool-use.json').map((item) => eventFrame(item.event, item.payload)));
    const chunks = run(bytes, 13);
    expect(deltas(chunks).slice(1, -1)).toEqual([
      { content: 'Checking.' },
      { tool_calls: [{ index: 0, id: 'tooluse_Wx0Bs7B1TQ', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] },
      { tool_calls: [{ index: 1, id: 'tooluse_noargs', type: 'function', function: { name: 'now', arguments: '' } }] },
      { tool_calls: [{ index: 1, function: { arguments: '{}' } }] },
    ]);
    expect((chunks.at(-2)?.['choices'] as { finish_reason: string }[])[0]?.finish_reason).toBe('tool_calls');
  });

  it('throws an exception frame as the mapped upstream error', () => {
    const converter = new BedrockStreamConverter(options);
    const decoder = new EventStreamDecoder('aws');
    converter.push(decoder.push(eventFrame('messageStart', { role: 'assistant' })));
    const exception = encodeFrame(
      { ':exception-type': 'throttlingException', ':content-type': 'application/json', ':message-type': 'exception' },
      '{"message":"Too many tokens, please wait before trying again."}',
    );
    let thrown: unknown;
    try {
      converter.push(decoder.push(exception));
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(GatewayError);
    expect(thrown).toMatchObject({ status: 429, type: 'rate_limit_error', message: 'Too many tokens, please wait before trying again.' });
  });

  it('sends nothing before the first content, so an exception after messageStart fails the attempt', () => {
    const converter = new BedrockStreamConverter(options);
    expect(converter.push(new EventStreamDecoder('aws').push(eventFrame('messageStart', { role: 'assistant' })))).toBe('');
  });

  it('reports a stream cut before messageStop, a cut-off frame and a corrupted frame', () => {
    const converter = new BedrockStreamConverter(options);
    converter.push(new EventStreamDecoder('aws').push(eventFrame('messageStart', { role: 'assistant' })));
    expect(() => converter.finish()).toThrow(/before messageStop/);
    const cut = new EventStreamDecoder('aws');
    cut.push(eventFrame('messageStart', {}).subarray(0, 20));
    expect(() => cut.finish()).toThrow(/cut-off frame/);
    const corrupted = eventFrame('messageStart', { role: 'assistant' });
    corrupted[corrupted.length - 6] = 0x21;
    expect(() => new EventStreamDecoder('aws').push(corrupted)).toThrow(/does not decode/);
  });
});
