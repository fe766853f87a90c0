import { describe, expect, it } from 'vitest';
import { SseEventTooLargeError, SseParser } from './sse-parser.ts';

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

  it('reads Buffers (whole-frame path, plain toString on clean cuts) exactly as the decoder does, at every split', () => {
    const text =
      '\uFEFFdata: {"a":"héllo 👋"}\n\ndata: {"b":2}\r\n\r\n: note\ndata: {"c":"€"}\n\nevent: x\ndata: one\ndata: two\n\ndata: [DONE]\n\n';
    const encoded = Buffer.from(text, 'utf8');
    const expected = ['{"a":"héllo 👋"}', '{"b":2}', '{"c":"€"}', 'one\ntwo', '[DONE]'];
    for (let size = 1; size <= encoded.length; size += 1) {
      const parser = new SseParser();
      const events = [];
      for (let start = 0; start < encoded.length; start += size) events.push(...parser.push(encoded.subarray(start, start + size)));
      events.push(...parser.finish());
      expect(events.map((event) => event.data)).toEqual(expected);
      expect(parser.truncated).toBe(false);
    }
  });

  it('keeps a U+FEFF after the start of the stream at every split (the decoder is made late, keeping marks)', () => {
    const encoded = Buffer.from('data: {"a":1}\n\ndata: {"z":"\uFEFF€"}\n\ndata: [DONE]\n\n', 'utf8');
    for (let size = 1; size <= encoded.length; size += 1) {
      const parser = new SseParser();
      const events = [];
      for (let start = 0; start < encoded.length; start += size) events.push(...parser.push(encoded.subarray(start, start + size)));
      expect(events.map((event) => event.data)).toEqual(['{"a":1}', '{"z":"\uFEFF€"}', '[DONE]']);
    }
  });

  it('says whether an event so far had several data lines', () => {
    const parser = new SseParser();
    parser.push(bytes('data: one\n\n'));
    expect(parser.multilineSeen).toBe(false);
    expect(parser.push(bytes('data: a\ndata: b\n\n'))).toEqual([{ event: null, data: 'a\nb' }]);
    expect(parser.multilineSeen).toBe(true);
  });

  it('discards an event cut off by the end of the stream, and says so', () => {
    for (const tail of ['data: tail', 'data: tail\n', 'event: x\n']) {
      const parser = new SseParser();
      expect(parser.push(bytes(`data: whole\n\n${tail}`))).toEqual([{ event: null, data: 'whole' }]);
      expect(parser.finish()).toEqual([]);
      expect(parser.truncated).toBe(true);
    }
    const complete = new SseParser();
    complete.push(bytes('data: whole\n\n: keep-alive\n'));
    expect(complete.finish()).toEqual([]);
    expect(complete.truncated).toBe(false);
  });

  it('parses one 32 MiB frame sent in 64 KiB chunks in linear time', () => {
    const parser = new SseParser({ maxEventSize: 64 * 1024 * 1024 });
    const chunk = new Uint8Array(64 * 1024).fill(97);
    const started = performance.now();
    expect(parser.push(bytes('data: '))).toEqual([]);
    for (let index = 0; index < 512; index += 1) parser.push(chunk);
    const [event] = parser.push(bytes('\n\n'));
    const elapsed = performance.now() - started;
    expect(event?.data.length).toBe(32 * 1024 * 1024);
    // The quadratic parser took minutes; linear work is ~0.1 s, with room for a loaded machine.
    expect(elapsed).toBeLessThan(3_000);
  });

  it('throws past its event bound, in one line or across lines', () => {
    const long = new SseParser({ maxEventSize: 1000 });
    long.push(bytes(`data: ${'a'.repeat(900)}`));
    expect(() => long.push(bytes('a'.repeat(200)))).toThrow(SseEventTooLargeError);
    const lines = new SseParser({ maxEventSize: 1000 });
    expect(() => lines.push(bytes(`data: ${'a'.repeat(400)}\n`.repeat(3)))).toThrow(SseEventTooLargeError);
    const many = new SseParser({ maxEventSize: 1000 });
    expect(many.push(bytes(`data: ${'a'.repeat(400)}\n\n`.repeat(10)))).toHaveLength(10);
  });

  it('accepts data without a space after the colon and ignores unknown fields', () => {
    const parser = new SseParser();
    expect(parser.push(bytes('id: 7\nretry: 10\ndata:x\n\n'))).toEqual([{ event: null, data: 'x' }]);
  });
});
