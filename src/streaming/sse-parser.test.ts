import { describe, expect, it } from 'vitest';
import { SseParser } from './sse-parser.ts';

const bytes = (text: string): Uint8Array => new TextEncoder().encode(text);

describe('SseParser', () => {
  it('parses events split across arbitrary chunk boundaries', () => {
    const text = 'data: {"a":1}\n\ndata: {"b":2}\n\ndata: [DONE]\n\n';
    for (let size = 1; size <= text.length; size += 1) {
      const parser = new SseParser();
      const events = [];
      for (let start = 0; start < text.length; start += size) events.push(...parser.push(bytes(text.slice(start, start + size))));
      events.push(...parser.finish());
      expect(events.map((event) => event.data)).toEqual(['{"a":1}', '{"b":2}', '[DONE]']);
    }
  });

  it('handles CRLF line endings, comments, event names and multi-line data', () => {
    const parser = new SseParser();
    const events = parser.push(bytes(': keep-alive\r\nevent: message_start\r\ndata: line one\r\ndata: line two\r\n\r\n'));
    expect(events).toEqual([{ event: 'message_start', data: 'line one\nline two' }]);
  });

  it('keeps multi-byte characters split between chunks intact', () => {
    const encoded = bytes('data: {"text":"héllo 👋"}\n\n');
    const parser = new SseParser();
    const events = [...parser.push(encoded.slice(0, 17)), ...parser.push(encoded.slice(17, 22)), ...parser.push(encoded.slice(22))];
    expect(events[0]?.data).toBe('{"text":"héllo 👋"}');
  });

  it('delivers a final event that lacks its blank line at the end of the stream', () => {
    const parser = new SseParser();
    expect(parser.push(bytes('data: tail'))).toEqual([]);
    expect(parser.finish()).toEqual([{ event: null, data: 'tail' }]);
  });

  it('accepts data without a space after the colon and ignores unknown fields', () => {
    const parser = new SseParser();
    expect(parser.push(bytes('id: 7\nretry: 10\ndata:x\n\n'))).toEqual([{ event: null, data: 'x' }]);
  });
});
