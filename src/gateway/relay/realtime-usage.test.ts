import { describe, expect, it } from 'vitest';
import { realtimeUrl } from './realtime-relay.ts';
import { RealtimeUsage } from './realtime-usage.ts';

const done = (usage: unknown): string => JSON.stringify({ type: 'response.done', event_id: 'e1', response: { id: 'r', usage } });

describe('RealtimeUsage', () => {
  it('sums the usage of every response.done event', () => {
    const usage = new RealtimeUsage();
    usage.observe(Buffer.from(done({ total_tokens: 15, input_tokens: 10, output_tokens: 5, input_token_details: { cached_tokens: 4 } })));
    usage.observe(done({ input_tokens: 3, output_tokens: 2 }));
    expect(usage.summary()).toEqual({
      prompt_tokens: 13,
      completion_tokens: 7,
      total_tokens: 20,
      prompt_tokens_details: { cached_tokens: 4 },
    });
  });

  it('ignores other events, unreadable frames and responses without usage', () => {
    const usage = new RealtimeUsage();
    usage.observe(JSON.stringify({ type: 'response.audio.delta', delta: 'AAAA' }));
    usage.observe(JSON.stringify({ type: 'conversation.item.created', item: { text: 'response.done' } }));
    usage.observe('{"type":"response.done", broken');
    usage.observe(done(null));
    expect(usage.summary()).toBeNull();
  });
});

describe('realtimeUrl', () => {
  it('turns the base URL into a ws(s) URL ending in /realtime with the query', () => {
    expect(realtimeUrl('https://api.openai.com/v1', new URLSearchParams({ model: 'gpt-realtime' }))).toBe(
      'wss://api.openai.com/v1/realtime?model=gpt-realtime',
    );
    expect(realtimeUrl('http://127.0.0.1:9000/v1/', new URLSearchParams('model=a&intent=transcription'))).toBe(
      'ws://127.0.0.1:9000/v1/realtime?model=a&intent=transcription',
    );
  });
});
