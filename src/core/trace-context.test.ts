import { describe, expect, it } from 'vitest';
import { currentTraceparent, traceContextOf, traceparentOf, withTraceparent } from './trace-context.ts';

const trace = '4bf92f3577b34da6a3ce929d0e0e4736';

describe('W3C trace context', () => {
  it("continues the client's trace under its span", () => {
    const context = traceContextOf(`00-${trace}-00f067aa0ba902b7-01`, 'vendor=x');
    expect(context).toMatchObject({ traceId: trace, parentSpanId: '00f067aa0ba902b7', flags: '01', traceState: 'vendor=x' });
    expect(context.spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(traceparentOf(context, 'aaaaaaaaaaaaaaaa')).toBe(`00-${trace}-aaaaaaaaaaaaaaaa-01`);
  });

  it('starts a new trace for a missing, malformed or all-zero traceparent', () => {
    for (const header of [
      undefined,
      'junk',
      `01-${trace}-00f067aa0ba902b7-01`,
      `00-${'0'.repeat(32)}-00f067aa0ba902b7-01`,
      `00-${trace}-${'0'.repeat(16)}-01`,
    ]) {
      const context = traceContextOf(header, undefined);
      expect(context.parentSpanId).toBeNull();
      expect(context.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(context.traceId).not.toBe(trace);
    }
  });

  it('carries nothing while propagation is off', () => {
    expect(withTraceparent('00-x', () => currentTraceparent())).toBeUndefined();
  });
});
