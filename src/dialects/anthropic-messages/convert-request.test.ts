import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../errors/gateway-error.ts';
import { thrown } from '../../testing/thrown.ts';
import { toChatRequest } from './convert-request.ts';

const base = { model: 'mock-model', max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] };

function rejection(body: unknown): GatewayError {
  const gatewayError = thrown(GatewayError, () => toChatRequest(body));
  expect(gatewayError.type).toBe('invalid_request_error');
  expect(gatewayError.status).toBe(400);
  return gatewayError;
}

describe('toChatRequest', () => {
  it('translates the minimal request and leaves streaming off', () => {
    const translated = toChatRequest(base);
    expect(translated.chat).toEqual({ model: 'mock-model', max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] });
    expect(translated.stream).toBe(false);
  });

  it('requires model, max_tokens and messages, as Anthropic does', () => {
    expect(rejection({ ...base, model: undefined })).toMatchObject({ code: 'missing_field', param: 'model' });
    expect(rejection({ ...base, max_tokens: undefined })).toMatchObject({ code: 'missing_field', param: 'max_tokens' });
    expect(rejection({ ...base, messages: undefined })).toMatchObject({ code: 'missing_field', param: 'messages' });
    expect(rejection({ ...base, max_tokens: 0 }).param).toBe('max_tokens');
    expect(rejection({ ...base, max_tokens: 1.5 }).param).toBe('max_tokens');
    expect(rejection({ ...base, model: 7 }).param).toBe('model');
    expect(rejection({ ...base, stream: 'yes' }).param).toBe('stream');
    expect(rejection([base]).code).toBe('invalid_body');
  });

  it('sends text documents as text and base64 PDFs as file parts, dropping cache_control and citations', () => {
    const text = { type: 'document', title: 'Facts', source: { type: 'text', media_type: 'text/plain', data: 'Sky: blue' } };
    const pdf = {
      type: 'document',
      source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' },
      citations: { enabled: true },
    };
    const marked = { type: 'text', text: 'Summarise', cache_control: { type: 'ephemeral' } };
    const { chat } = toChatRequest({
      ...base,
      messages: [{ role: 'user', content: [{ ...text, cache_control: { type: 'ephemeral' } }, pdf, marked] }],
    });
    expect(chat['messages']).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Facts\n\nSky: blue' },
          { type: 'file', file: { filename: 'document.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
          { type: 'text', text: 'Summarise' },
        ],
      },
    ]);
  });

  it('rejects roles and blocks a chat upstream cannot take, naming where', () => {
    expect(rejection({ ...base, messages: [{ role: 'system', content: 'x' }] }).param).toBe('messages[0].role');
    const searchBlock = { type: 'search_result', source: 'https://x', title: 't', content: [] };
    const error = rejection({ ...base, messages: [{ role: 'user', content: [{ type: 'text', text: 'a' }, searchBlock] }] });
    expect(error.param).toBe('messages[0].content[1].type');
    expect(error.message).toContain('search_result');
    const urlDocument = { type: 'document', source: { type: 'url', url: 'https://x/y.pdf' } };
    expect(rejection({ ...base, messages: [{ role: 'user', content: [urlDocument] }] }).param).toBe('messages[0].content[0].source');
    const fileImage = { type: 'image', source: { type: 'file', file_id: 'file_1' } };
    expect(rejection({ ...base, messages: [{ role: 'user', content: [fileImage] }] }).param).toBe('messages[0].content[0].source');
    expect(rejection({ ...base, messages: [{ role: 'assistant', content: [{ type: 'tool_use', name: 'x' }] }] }).param).toBe(
      'messages[0].content[0].id',
    );
    expect(rejection({ ...base, messages: [{ role: 'user', content: [{ type: 'tool_result' }] }] }).param).toBe(
      'messages[0].content[0].tool_use_id',
    );
  });

  it('accepts only text blocks in the system prompt', () => {
    expect(rejection({ ...base, system: [{ type: 'image', source: {} }] }).param).toBe('system[0]');
    expect(rejection({ ...base, system: 5 }).param).toBe('system');
    expect(toChatRequest({ ...base, system: '' }).chat['messages']).toEqual(base.messages);
    expect(toChatRequest({ ...base, system: [] }).chat['messages']).toEqual(base.messages);
  });

  it('accepts custom tools only, and tool_choice types auto, any, tool and none', () => {
    const tool = { name: 'lookup', input_schema: { type: 'object' } };
    const server = { type: 'web_search_20250305', name: 'web_search' };
    expect(rejection({ ...base, tools: [tool, server] }).param).toBe('tools[1].type');
    expect(rejection({ ...base, tools: [{ name: 'x' }] }).param).toBe('tools[0].input_schema');
    expect(rejection({ ...base, tools: [tool], tool_choice: { type: 'required' } }).param).toBe('tool_choice.type');
    expect(rejection({ ...base, tools: [tool], tool_choice: { type: 'tool' } }).param).toBe('tool_choice.name');
    expect(toChatRequest({ ...base, tools: [tool], tool_choice: { type: 'auto' } }).chat['tool_choice']).toBe('auto');
    const parallelOff = toChatRequest({ ...base, tools: [tool], tool_choice: { type: 'auto', disable_parallel_tool_use: true } }).chat;
    expect(parallelOff).toMatchObject({ tool_choice: 'auto', parallel_tool_calls: false });
    expect(toChatRequest({ ...base, tools: [] }).chat['tools']).toBeUndefined();
  });

  it('checks stop_sequences and metadata shapes', () => {
    expect(rejection({ ...base, stop_sequences: 'END' }).param).toBe('stop_sequences');
    expect(rejection({ ...base, metadata: 'x' }).param).toBe('metadata');
    expect(toChatRequest({ ...base, stop_sequences: [] }).chat['stop']).toBeUndefined();
    expect(toChatRequest({ ...base, metadata: {} }).chat['user']).toBeUndefined();
  });

  it('turns a structured output format into response_format and drops the effort', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } } };
    const chat = toChatRequest({ ...base, output_config: { effort: 'high', format: { type: 'json_schema', schema } } }).chat;
    expect(chat['response_format']).toEqual({ type: 'json_schema', json_schema: { name: 'output', schema } });
    expect(chat['output_config']).toBeUndefined();
    expect(toChatRequest({ ...base, output_config: { effort: 'low' } }).chat['response_format']).toBeUndefined();
    expect(rejection({ ...base, output_config: { format: { type: 'xml' } } }).param).toBe('output_config.format');
  });

  it('asks for stream usage whatever the client sent', () => {
    const chat = toChatRequest({ ...base, stream: true, stream_options: { include_usage: false } }).chat;
    expect(chat['stream']).toBe(true);
    expect(chat['stream_options']).toEqual({ include_usage: true });
  });

  it('estimates the prompt at about four characters a token, leaving image data out', () => {
    const text = 'x'.repeat(400);
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'A'.repeat(100_000) } };
    const translated = toChatRequest({
      ...base,
      system: 'y'.repeat(40),
      messages: [{ role: 'user', content: [{ type: 'text', text }, image] }],
    });
    expect(translated.estimatedInputTokens).toBeGreaterThanOrEqual(110);
    expect(translated.estimatedInputTokens).toBeLessThan(130);
  });
});
