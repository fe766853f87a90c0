import { expect } from 'vitest';

import { parseJson } from './http.ts';

// Streams the gateway sends: every item of a client's stream, and the SSE framing of the
// OpenAI and Anthropic dialects read from a raw body.

/** Every item of a client's stream, in order (`Out` narrows the items for the fields the gateway adds). */
export async function collect<Item, Out extends Item = Item>(stream: AsyncIterable<Item>): Promise<Out[]> {
  const items: Out[] = [];
  for await (const item of stream) items.push(item as Out);
  return items;
}

/** The JSON chunks of an SSE body; asserts `data:` framing and the final `data: [DONE]`. */
export function parseSse(text: string): Record<string, unknown>[] {
  const frames = text.split('\n\n').filter((frame) => frame !== '');
  for (const frame of frames) expect(frame.startsWith('data: '), frame).toBe(true);
  expect(frames.at(-1)).toBe('data: [DONE]');
  return frames.slice(0, -1).map((frame) => parseJson(frame.slice('data: '.length)));
}

export interface SseFrame {
  event: string;
  data: Record<string, unknown>;
}

/** Anthropic SSE frames: each names its event and carries JSON of the same `type`. */
export function parseAnthropicSse(text: string): SseFrame[] {
  const frames = text.split('\n\n').filter((frame) => frame.trim() !== '');
  return frames.map((frame) => {
    const match = /^event: (\S+)\ndata: (.*)$/s.exec(frame);
    expect(match, frame).not.toBeNull();
    const event = match?.[1] ?? '';
    const data = parseJson(match?.[2] ?? '');
    expect(data['type']).toBe(event);
    return { event, data };
  });
}
