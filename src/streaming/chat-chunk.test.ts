import { describe, expect, it } from 'vitest';
import { appendProvider, chunkKeys, finishKey, providerKey, transformChunk, usageKey } from './chat-chunk.ts';
import { hasFinishReason } from './stream-end.ts';

const options = { provider: 'openai', providerJson: '"openai"', includeUsage: false };

describe('appendProvider', () => {
  it('appends the provider to an object and keeps valid JSON', () => {
    const out = appendProvider('{"id":"x","choices":[{"delta":{"content":"}"}}]}', '"openai"');
    expect(JSON.parse(out)).toEqual({ id: 'x', choices: [{ delta: { content: '}' } }], provider: 'openai' });
  });

  it('handles empty objects and trailing whitespace', () => {
    expect(JSON.parse(appendProvider('{ }', '"a"'))).toEqual({ provider: 'a' });
    expect(JSON.parse(appendProvider('{"x":1}\n  ', '"a"'))).toEqual({ x: 1, provider: 'a' });
  });
});

describe('transformChunk', () => {
  const content = '{"id":"c","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":"hi"}}],"usage":null}';
  const usageOnly =
    '{"id":"c","object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2,"total_tokens":5}}';

  it('stamps the provider on ordinary chunks without reporting usage', () => {
    const outcome = transformChunk(content, options);
    expect(outcome.usage).toBeNull();
    expect(JSON.parse(outcome.payload ?? '')).toMatchObject({ provider: 'openai', usage: null });
  });

  it('drops the usage-only chunk when the client did not ask, but reports the usage', () => {
    const outcome = transformChunk(usageOnly, options);
    expect(outcome.payload).toBeNull();
    expect(outcome.usage).toEqual({ prompt_tokens: 3, completion_tokens: 2, total_tokens: 5 });
  });

  it('keeps the usage chunk when the client asked for it', () => {
    const outcome = transformChunk(usageOnly, { ...options, includeUsage: true });
    expect(JSON.parse(outcome.payload ?? '')).toMatchObject({ provider: 'openai', usage: { total_tokens: 5 } });
    expect(outcome.usage?.['total_tokens']).toBe(5);
  });

  it('passes the usage chunk on as received, with the provider appended, when nothing must go', () => {
    const spaced = '{"choices":[], "usage": {"total_tokens":5,"cost":1.0,"note":"\\u00e9"}}';
    const outcome = transformChunk(spaced, { ...options, includeUsage: true });
    expect(outcome.payload).toBe('{"choices":[], "usage": {"total_tokens":5,"cost":1.0,"note":"\\u00e9"},"provider":"openai"}');
    expect(outcome.usage).toEqual({ total_tokens: 5, cost: 1, note: 'é' });
  });

  it('removes usage from a chunk that also carries choices when the client did not ask', () => {
    const mixed = '{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"usage": {"total_tokens":9}}';
    const outcome = transformChunk(mixed, options);
    const parsed = JSON.parse(outcome.payload ?? '') as Record<string, unknown>;
    expect(parsed['usage']).toBeUndefined();
    expect(parsed['provider']).toBe('openai');
    expect(outcome.usage).toEqual({ total_tokens: 9 });
  });

  it('replaces a provider field the upstream already set', () => {
    const outcome = transformChunk('{"provider":"OpenAI","choices":[]}', options);
    expect(JSON.parse(outcome.payload ?? '')).toEqual({ provider: 'openai', choices: [] });
  });

  it('does not mistake usage text inside a string for a usage field', () => {
    const tricky = '{"choices":[{"delta":{"content":"\\"usage\\": {\\"x\\":1}"}}]}';
    const outcome = transformChunk(tricky, options);
    expect(outcome.usage).toBeNull();
    expect(JSON.parse(outcome.payload ?? '')).toMatchObject({ provider: 'openai' });
  });

  it('passes non-object payloads through untouched', () => {
    expect(transformChunk('keep-alive', options)).toEqual({ payload: 'keep-alive', usage: null });
  });
});

describe('chunkKeys', () => {
  /** What three separate searches (the code before the one-pass search) say of the text. */
  function separately(data: string): number {
    let flags = 0;
    for (let index = data.indexOf('"usage":'); index !== -1; index = data.indexOf('"usage":', index + 1)) {
      if (!/^ *null/.test(data.slice(index + 8))) flags |= usageKey;
    }
    if (data.includes('"provider"')) flags |= providerKey;
    if (hasFinishReason(data)) flags |= finishKey;
    return flags;
  }

  it('finds each name as separate searches do', () => {
    const samples = [
      '{"choices":[{"delta":{"content":"hi"},"finish_reason":null}],"usage":null}',
      '{"choices":[{"delta":{},"finish_reason":"stop"}],"usage":null}',
      '{"choices":[],"usage":{"total_tokens":3}}',
      '{"choices":[],"usage": {"total_tokens":3},"provider":"x"}',
      '{"a":"usage","b":"provider","finish_reason":  "length"}',
      '{"usage":null,"x":{"usage":{"n":1}}}',
      '{"finish_reason":null,"usage" :{"n":1}}',
      '{"c":"\\"usage\\":1 \\"provider\\""}',
      '{"usage""provider"}',
      '{"finish_reason""usage":1}',
      'keep-alive',
    ];
    for (const data of samples) expect(chunkKeys(data), data).toBe(separately(data));
  });
});
