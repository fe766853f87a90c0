import { describe, expect, it } from 'vitest';
import { SseEventAligner } from './event-aligner.ts';

describe('SseEventAligner', () => {
  it('passes whole events through and holds back an unfinished one, however the bytes are split', () => {
    const text = 'event: a\ndata: {"x":1}\n\ndata: two\r\n\r\n: comment\n\ndata: cut';
    const whole = text.slice(0, text.lastIndexOf('\n') + 1);
    for (let size = 1; size <= text.length; size += 1) {
      const aligner = new SseEventAligner();
      let out = '';
      for (let start = 0; start < text.length; start += size) {
        const piece = aligner.push(Buffer.from(text.slice(start, start + size))).toString();
        if (piece !== '') expect(piece.endsWith('\n\n') || piece.endsWith('\r\n\r\n')).toBe(true);
        out += piece;
      }
      expect(out).toBe(whole);
    }
  });

  it('is linear on one long event', () => {
    const aligner = new SseEventAligner();
    const chunk = Buffer.alloc(64 * 1024, 'a');
    const started = performance.now();
    for (let index = 0; index < 512; index += 1) expect(aligner.push(chunk).length).toBe(0);
    expect(aligner.push(Buffer.from('\n\n')).length).toBe(512 * chunk.length + 2);
    expect(performance.now() - started).toBeLessThan(2_000);
  });
});
