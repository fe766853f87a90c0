import { describe, expect, it } from 'vitest';
import { estimateInputTokens } from './token-estimate.ts';

describe('estimateInputTokens', () => {
  it('counts text with a tokenizer, plus framing per message', async () => {
    const one = await estimateInputTokens({ messages: [{ role: 'user', content: 'Hello world' }] });
    expect(one).toBe(2 + 4);
  });

  it('counts system blocks, tool calls and results, tool definitions, and a flat amount per image', async () => {
    const base = { messages: [{ role: 'user', content: 'Hi' }] };
    const plain = await estimateInputTokens(base);
    const withSystem = await estimateInputTokens({ ...base, system: [{ type: 'text', text: 'Be brief and kind.' }] });
    expect(withSystem).toBeGreaterThan(plain);
    const withTools = await estimateInputTokens({ ...base, tools: [{ name: 'get_weather', input_schema: { type: 'object' } }] });
    expect(withTools).toBeGreaterThan(plain);
    const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'A'.repeat(10_000) } };
    const withImage = await estimateInputTokens({ messages: [{ role: 'user', content: [image] }] });
    expect(withImage).toBe(1600 + 4);
    const loop = {
      messages: [
        { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: { city: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'sunny' }] },
      ],
    };
    expect(await estimateInputTokens(loop)).toBeGreaterThan(8 + 4);
  });
});
