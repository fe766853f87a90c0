import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.ts';
import type { ChatRequestBody } from '../provider.ts';
import { convertChatRequest } from './convert-chat-request.ts';

const provider = 'claude';
const user = { role: 'user', content: 'Hi' };
const tool = { type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } };

function convert(fields: Record<string, unknown>): Record<string, unknown> {
  return convertChatRequest({ model: 'claude-sonnet-4-5', messages: [user], ...fields } as ChatRequestBody, { provider });
}

function rejection(fields: Record<string, unknown>): GatewayError {
  try {
    convert(fields);
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayError);
    return error as GatewayError;
  }
  throw new Error('expected the translation to fail');
}

describe('convertChatRequest', () => {
  it.each([
    [{ n: 2 }, 'n', 'unsupported_parameter'],
    [{ logprobs: true }, 'logprobs', 'unsupported_parameter'],
    [{ modalities: ['text', 'audio'] }, 'modalities', 'unsupported_parameter'],
    [{ response_format: { type: 'json_object' } }, 'response_format.type', 'unsupported_parameter'],
    [{ tool_choice: 'required' }, 'tool_choice', 'invalid_body'],
    [{ tools: [{ type: 'custom', custom: { name: 'x' } }] }, 'tools[0].type', 'unsupported_parameter'],
    [{ tools: [tool], tool_choice: { type: 'allowed_tools' } }, 'tool_choice', 'unsupported_parameter'],
    [{ max_tokens: 0 }, 'max_tokens', 'invalid_body'],
    [{ stop: 5 }, 'stop', 'invalid_body'],
    [{ messages: [{ role: 'function', name: 'f', content: 'x' }] }, 'messages[0].role', 'unsupported_parameter'],
    [
      { messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AA', format: 'wav' } }] }] },
      'messages[0].content[0].type',
      'unsupported_parameter',
    ],
    [
      { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/tiff;base64,AA' } }] }] },
      'messages[0].content[0].image_url.url',
      'unsupported_parameter',
    ],
    [
      { messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'ftp://x/y.png' } }] }] },
      'messages[0].content[0].image_url.url',
      'unsupported_parameter',
    ],
    [
      { messages: [{ role: 'user', content: [{ type: 'file', file: { file_id: 'file-1' } }] }] },
      'messages[0].content[0].file.file_id',
      'unsupported_parameter',
    ],
    [
      { messages: [{ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }, user] },
      'messages[0].content[0]',
      'unsupported_parameter',
    ],
    [
      {
        messages: [
          user,
          { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{oops' } }] },
        ],
      },
      'messages[1].tool_calls[0].function.arguments',
      'invalid_body',
    ],
    [{ messages: [user, { role: 'tool', content: 'x' }] }, 'messages[1].tool_call_id', 'invalid_body'],
  ])('rejects %j with a 400 naming %s', (fields, param, code) => {
    const error = rejection(fields);
    expect(error.status).toBe(400);
    expect(error.type).toBe('invalid_request_error');
    expect(error.param).toBe(param);
    expect(error.code).toBe(code);
    if (code === 'unsupported_parameter') expect(error.message).toContain('claude (anthropic)');
  });

  it('maps tool_choice none to none and keeps the tools (a history with tool_use needs them)', () => {
    expect(convert({ tools: [tool], tool_choice: 'none' })).toMatchObject({ tools: [{ name: 'lookup' }], tool_choice: { type: 'none' } });
    expect(convert({ tool_choice: 'none' })).not.toHaveProperty('tool_choice');
    expect(convert({ tool_choice: 'auto' })).not.toHaveProperty('tool_choice');
  });

  it('turns parallel_tool_calls false into disable_parallel_tool_use on an auto choice', () => {
    expect(convert({ tools: [tool], parallel_tool_calls: false })['tool_choice']).toEqual({
      type: 'auto',
      disable_parallel_tool_use: true,
    });
    expect(convert({ tools: [tool], tool_choice: 'auto' })['tool_choice']).toEqual({ type: 'auto' });
    expect(convert({ tools: [tool], tool_choice: { type: 'tool', name: 'lookup' } })['tool_choice']).toEqual({
      type: 'tool',
      name: 'lookup',
    });
  });

  it('clamps temperature to Anthropic range and takes stop arrays', () => {
    expect(convert({ temperature: 1.7, stop: ['END', 'STOP'] })).toMatchObject({ temperature: 1, stop_sequences: ['END', 'STOP'] });
    expect(convert({ stop: null })).not.toHaveProperty('stop_sequences');
  });

  it('carries Anthropic-native fields and drops OpenAI-only ones', () => {
    const thinking = { type: 'enabled', budget_tokens: 2048 };
    const converted = convert({
      top_k: 5,
      thinking,
      reasoning_effort: 'high',
      seed: 1,
      store: true,
      metadata: { a: 'b' },
      service_tier: 'flex',
    });
    expect(converted).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      messages: [{ role: 'user', content: 'Hi' }],
      top_k: 5,
      thinking,
    });
  });

  it('leaves out empty assistant turns and merges consecutive user turns', () => {
    const messages = [user, { role: 'assistant', content: '' }, { role: 'user', content: [{ type: 'text', text: 'there' }] }];
    expect(convert({ messages })['messages']).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Hi' },
          { type: 'text', text: 'there' },
        ],
      },
    ]);
  });

  it('sends PDF and text files as documents', () => {
    const pdf = { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'a.pdf' } };
    const text = { type: 'file', file: { file_data: `data:text/plain;base64,${Buffer.from('notes').toString('base64')}` } };
    const remote = { type: 'file', file: { file_url: 'https://example.com/b.pdf' } };
    const [message] = convert({ messages: [{ role: 'user', content: [pdf, text, remote] }] })['messages'] as { content: unknown }[];
    expect(message?.content).toEqual([
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' }, title: 'a.pdf' },
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'notes' } },
      { type: 'document', source: { type: 'url', url: 'https://example.com/b.pdf' } },
    ]);
  });

  it('gives thinking room above its budget when max_tokens is absent', () => {
    const converted = convert({ reasoning: { effort: 'medium' }, top_p: 0.5 });
    expect(converted).toMatchObject({ max_tokens: 14096, thinking: { type: 'enabled', budget_tokens: 10000 } });
    expect(converted).not.toHaveProperty('top_p');
    expect(convert({ reasoning_effort: 'none' })).not.toHaveProperty('thinking');
  });

  it('names the safety identifier as the user when there is no user field', () => {
    expect(convert({ safety_identifier: 'hash-1' })['metadata']).toEqual({ user_id: 'hash-1' });
  });
});
