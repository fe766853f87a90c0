import { describe, expect, it } from 'vitest';

import { GatewayError } from '../../errors/gateway-error.ts';
import { convertChatRequest } from './convert-chat-request.ts';
import { documentName } from './convert-content.ts';

const png = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

function rejection(body: Record<string, unknown>): GatewayError {
  try {
    convertChatRequest({ model: 'm', ...body }, 'aws');
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

describe('convertChatRequest', () => {
  it('maps system, text, images, documents, sampling and stop sequences', () => {
    const request = convertChatRequest(
      {
        model: 'us.anthropic.claude-3-5-sonnet-20241022-v2:0',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'developer', content: [{ type: 'text', text: 'Use metric units.' }] },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?', cache_control: { type: 'ephemeral' } },
              { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
              { type: 'file', file: { filename: 'report 2024.pdf', file_data: 'data:application/pdf;base64,JVBERi0=' } },
            ],
          },
        ],
        max_completion_tokens: 300,
        temperature: 1.5,
        top_p: 0.9,
        stop: ['END'],
        stream: true,
        stream_options: { include_usage: true },
        seed: 3,
      },
      'aws',
    );
    expect(request).toEqual({
      system: [{ text: 'Be brief.' }, { text: 'Use metric units.' }],
      messages: [
        {
          role: 'user',
          content: [
            { text: 'What is this?' },
            { cachePoint: { type: 'default' } },
            { image: { format: 'png', source: { bytes: png } } },
            { document: { format: 'pdf', name: 'report 2024', source: { bytes: 'JVBERi0=' } } },
          ],
        },
      ],
      inferenceConfig: { maxTokens: 300, temperature: 1, topP: 0.9, stopSequences: ['END'] },
    });
  });

  it('maps tools, tool choice, tool calls and tool results (merged into one user turn)', () => {
    const request = convertChatRequest(
      {
        model: 'm',
        messages: [
          { role: 'user', content: 'Weather in Paris and Rome?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
              { id: 'call_2', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Rome"}' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: '18 C' },
          { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '24 C' }] },
          { role: 'user', content: 'Thanks' },
        ],
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              description: 'Weather of a city',
              parameters: { type: 'object', properties: { city: { type: 'string' } } },
            },
          },
        ],
        tool_choice: { type: 'function', function: { name: 'get_weather' } },
        additionalModelRequestFields: { top_k: 20 },
      },
      'aws',
    );
    expect(request.messages).toEqual([
      { role: 'user', content: [{ text: 'Weather in Paris and Rome?' }] },
      {
        role: 'assistant',
        content: [
          { toolUse: { toolUseId: 'call_1', name: 'get_weather', input: { city: 'Paris' } } },
          { toolUse: { toolUseId: 'call_2', name: 'get_weather', input: { city: 'Rome' } } },
        ],
      },
      {
        role: 'user',
        content: [
          { toolResult: { toolUseId: 'call_1', content: [{ text: '18 C' }] } },
          { toolResult: { toolUseId: 'call_2', content: [{ text: '24 C' }] } },
          { text: 'Thanks' },
        ],
      },
    ]);
    expect(request.toolConfig).toEqual({
      tools: [
        {
          toolSpec: {
            name: 'get_weather',
            description: 'Weather of a city',
            inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } } } },
          },
        },
      ],
      toolChoice: { tool: { name: 'get_weather' } },
    });
    expect(request['additionalModelRequestFields']).toEqual({ top_k: 20 });
    expect(
      convertChatRequest(
        { model: 'm', messages: [], tools: [{ type: 'function', function: { name: 'f' } }], tool_choice: 'required' },
        'aws',
      ).toolConfig,
    ).toEqual({
      tools: [{ toolSpec: { name: 'f', inputSchema: { json: { type: 'object', properties: {} } } } }],
      toolChoice: { any: {} },
    });
  });

  it('leaves the tools out for tool_choice none, unless the conversation holds tool calls', () => {
    const tools = [{ type: 'function', function: { name: 'f' } }];
    expect(
      convertChatRequest({ model: 'm', messages: [{ role: 'user', content: 'hi' }], tools, tool_choice: 'none' }, 'aws').toolConfig,
    ).toBeUndefined();
    const history = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c1', content: 'done' },
    ];
    const request = convertChatRequest({ model: 'm', messages: history, tools, tool_choice: 'none' }, 'aws');
    expect(request.toolConfig).toEqual({ tools: [{ toolSpec: { name: 'f', inputSchema: { json: { type: 'object', properties: {} } } } }] });
  });

  it('turns reasoning_effort into extended thinking on Claude models only', () => {
    const body = { messages: [{ role: 'user', content: 'hi' }], reasoning_effort: 'low', temperature: 0.3, max_tokens: 1000 };
    const claude = convertChatRequest({ model: 'us.anthropic.claude-sonnet-4-20250514-v1:0', ...body }, 'aws');
    expect(claude['additionalModelRequestFields']).toEqual({ thinking: { type: 'enabled', budget_tokens: 5000 } });
    expect(claude.inferenceConfig).toEqual({ maxTokens: 9096 });
    const nova = convertChatRequest({ model: 'amazon.nova-pro-v1:0', ...body }, 'aws');
    expect(nova['additionalModelRequestFields']).toBeUndefined();
    expect(nova.inferenceConfig).toEqual({ maxTokens: 1000, temperature: 0.3 });
  });

  it('rejects what Converse cannot honour with a 400 naming the field', () => {
    expect(rejection({ messages: [], n: 2 })).toMatchObject({ status: 400, code: 'unsupported_parameter', param: 'n' });
    expect(rejection({ messages: [], response_format: { type: 'json_object' } })).toMatchObject({ param: 'response_format.type' });
    const byUrl = rejection({
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }],
    });
    expect(byUrl).toMatchObject({ code: 'unsupported_parameter', param: 'messages[0].content[0].image_url.url' });
    expect(
      rejection({ messages: [{ role: 'assistant', tool_calls: [{ id: 'x', function: { name: 'f', arguments: '{' } }] }] }),
    ).toMatchObject({
      code: 'invalid_body',
    });
  });

  it('keeps document names within the characters Bedrock allows', () => {
    expect(documentName('Q3_report.v2.pdf')).toBe('Q3-report-v2');
    expect(documentName('')).toBe('document');
  });
});
