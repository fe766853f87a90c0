import { AsyncLocalStorage } from 'node:async_hooks';
import { randomBytes } from 'node:crypto';

/**
 * A request's W3C trace context (https://www.w3.org/TR/trace-context/), made at request start
 * while tracing is on: the trace (the client's, or a new one), the client's span (the server
 * span's parent) and the server span's own id. Spans are built from it when the request ends.
 */
export interface TraceContext {
  readonly traceId: string;
  readonly spanId: string;
  /** The client's span from its `traceparent`; null: the server span is the root. */
  readonly parentSpanId: string | null;
  /** `01` sampled (the client asked for it, or no client context). */
  readonly flags: string;
  readonly traceState: string | null;
}

const traceparentPattern = /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/;

export const newSpanId = (): string => randomBytes(8).toString('hex');

/** The context of a request: the client's trace when its `traceparent` is valid, else a new trace. */
export function traceContextOf(traceparent: string | string[] | undefined, traceState: string | string[] | undefined): TraceContext {
  const match = typeof traceparent === 'string' ? traceparentPattern.exec(traceparent.trim().toLowerCase()) : null;
  const traceId = match?.[1];
  const parentSpanId = match?.[2];
  if (match === null || traceId === undefined || parentSpanId === undefined || /^0+$/.test(traceId) || /^0+$/.test(parentSpanId)) {
    return { traceId: randomBytes(16).toString('hex'), spanId: newSpanId(), parentSpanId: null, flags: '01', traceState: null };
  }
  const state = typeof traceState === 'string' && traceState.length > 0 ? traceState : null;
  return { traceId, spanId: newSpanId(), parentSpanId, flags: match[3] ?? '01', traceState: state };
}

/** The `traceparent` an upstream attempt is sent with: the attempt's client span is its parent. */
export const traceparentOf = (context: TraceContext, spanId: string): string => `00-${context.traceId}-${spanId}-${context.flags}`;

/**
 * Carries an attempt's `traceparent` from the pipeline (src/gateway/execute-plan.ts) to the
 * upstream client, which adds it to every upstream request made within the attempt. Made only
 * when tracing is on: otherwise `currentTraceparent` is a null check.
 */
let propagation: AsyncLocalStorage<string> | null = null;

export function enableTracePropagation(): void {
  propagation ??= new AsyncLocalStorage<string>();
}

export function currentTraceparent(): string | undefined {
  return propagation?.getStore();
}

export function withTraceparent<T>(traceparent: string, run: () => T): T {
  return propagation === null ? run() : propagation.run(traceparent, run);
}
