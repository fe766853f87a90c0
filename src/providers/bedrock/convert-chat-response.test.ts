import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

import { GatewayError } from '../../errors/gateway-error.ts';
import { mapUpstreamError } from '../upstream-errors.ts';
import { convertChatResponse, mapStopReason, parseConverseResponse } from './convert-chat-response.ts';
import { parseModelList } from './parse-model-list.ts';

const fixture = (name: string): string => readFileSync(new URL(`../../../test/fixtures/bedrock/${name}`, import.meta.url), 'utf8');
const options = { id: 'chatcmpl-req-1', created: 1_700_000_000, model: 'us.anthropic.claude-3-5-sonnet-20241022-v2:0' };

describe('convertChatResponse', () => {
  it('converts a text answer with cache usage', () => {
    const answer = convertChatResponse(parseConverseResponse(fixture('converse-response-text.json'), 'aws'), options);
    expect(answer).toMatchObject({
      id: 'chatcmpl-req-1',
      object: 'chat.completion',
      model: options.model,
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello! How can I help you today?' }, finish_reason: 'stop' }],
      usage: {
        prompt_tokens: 132,
        completion_tokens: 9,
        total_tokens: 141,
        prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 20 },
      },
    });
  });

  it('converts tool use and reasoning', () => {
    const answer = convertChatResponse(parseConverseResponse(fixture('converse-response-tool-use.json'), 'aws'), options);
    const choice = (answer['choices'] as Record<string, unknown>[])[0];
    expect(choice).toMatchObject({
      finish_reason: 'tool_calls',
      message: {
        content: 'Let me look that up.',
        reasoning_content: 'The user wants the weather.',
        tool_calls: [
          { id: 'tooluse_kZJMlvQmRJ6eAyJE5GIl7Q', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        ],
      },
    });
  });

  it('maps every stop reason', () => {
    const reasons = [
      'end_turn',
      'tool_use',
      'max_tokens',
      'stop_sequence',
      'guardrail_intervened',
      'content_filtered',
      'model_context_window_exceeded',
    ];
    expect(reasons.map(mapStopReason)).toEqual(['stop', 'tool_calls', 'length', 'stop', 'content_filter', 'content_filter', 'length']);
  });

  it('refuses an answer without output.message', () => {
    expect(() => parseConverseResponse('{"message":"x"}', 'aws')).toThrow(GatewayError);
  });

  it("maps Bedrock's error answers to the envelope, message kept", () => {
    for (const [name, type, status] of [
      ['error-throttling.json', 'rate_limit_error', 429],
      ['error-validation.json', 'invalid_request_error', 400],
    ] as const) {
      const spec = JSON.parse(fixture(name)) as { status: number; body: unknown };
      const error = mapUpstreamError(spec.status, JSON.stringify(spec.body), 'aws');
      expect(error).toMatchObject({ type, status, message: (spec.body as { message: string }).message });
    }
  });

  it('lists the active models of the control plane', () => {
    expect(parseModelList(fixture('foundation-models.json'))).toEqual([
      { id: 'anthropic.claude-3-5-sonnet-20241022-v2:0' },
      { id: 'amazon.titan-embed-text-v2:0' },
    ]);
    expect(parseModelList('{}')).toBeNull();
  });
});
