import type { FastifyReply, FastifyRequest } from 'fastify';
import type { GatewayError } from '../errors/gateway-error.ts';
import type { TraceContext } from '../core/trace-context.ts';
import type { RequestLogGuardrail } from './request-log-store.ts';

/** An upstream attempt as the pipeline records it (src/gateway/execute-plan.ts). */
export interface TrailAttempt {
  readonly provider: string;
  readonly model: string;
  readonly outcome: 'ok' | 'failed' | 'skipped_saturated' | 'skipped_circuit_open';
  readonly status?: number;
  readonly latencyMs?: number;
  readonly errorCode?: string | null;
  /** Executed attempts: `performance.now()` at the call. */
  readonly startedAt?: number;
  /** While tracing is on: the attempt's client span id. */
  readonly spanId?: string;
}

/**
 * What the pipeline learns about one request for its request log entry, filled as it goes
 * (plain fields, no allocation beyond this object): the plan's virtual model, the attempts
 * (the pipeline's own array), the metered tokens and cost (summed like the request's usage
 * records), the error, the first body byte of a stream. `settle` hands it to the log once.
 */
export class RequestTrail {
  /** The route, e.g. `/v1/chat/completions`. */
  readonly endpoint: string;
  virtualModel: string | null = null;
  attempts: readonly TrailAttempt[] | null = null;
  promptTokens = 0;
  completionTokens = 0;
  totalTokens = 0;
  /** Sum of the known costs of the request's usage records; null while none is known. */
  costUsd: number | null = null;
  cacheHit = false;
  error: GatewayError | null = null;
  /** `performance.now()` of the first body write of a stream. */
  firstByteAt: number | null = null;
  /** The response body sent (JSON answers and errors), when bodies are kept. */
  responseBody: string | null = null;
  /** The W3C trace context, while tracing is on (src/observability/tracing.ts). */
  trace: TraceContext | null = null;
  /** The client went away before its response was finished. */
  clientGone = false;
  /** The guardrail decisions made for the request (src/guardrails/pipeline.ts); null while none. */
  guardrails: RequestLogGuardrail[] | null = null;
  /** The request and reply it belongs to (null in unit tests): kept here so that no closure is made per request. */
  readonly request: FastifyRequest | null;
  readonly reply: FastifyReply | null;
  #settled = false;
  #waiting: NodeJS.Timeout | null = null;
  /** Shared by every trail of a route. */
  readonly #onSettle: (trail: RequestTrail) => void;

  constructor(
    endpoint: string,
    onSettle: (trail: RequestTrail) => void,
    request: FastifyRequest | null = null,
    reply: FastifyReply | null = null,
  ) {
    this.endpoint = endpoint;
    this.#onSettle = onSettle;
    this.request = request;
    this.reply = reply;
  }

  /** Copies what Metering computed for one usage record of this request. */
  metered(promptTokens: number, completionTokens: number, totalTokens: number, costUsd: number | null, cacheHit: boolean): void {
    this.promptTokens += promptTokens;
    this.completionTokens += completionTokens;
    this.totalTokens += totalTokens;
    if (costUsd !== null) this.costUsd = (this.costUsd ?? 0) + costUsd;
    if (cacheHit) this.cacheHit = true;
    // After the client left, the last report (a stream's end, a failed attempt) is the end of the story.
    if (this.clientGone) setImmediate(() => this.settle());
  }

  /**
   * The client left before its response finished: no response hook will run. The entry is
   * written once the pipeline has reported (metering or the error), or after a grace period.
   */
  gone(): void {
    this.clientGone = true;
    this.#waiting = setTimeout(() => this.settle(), 2_000);
  }

  /** Hands the trail to the log, once. */
  settle(): void {
    if (this.#settled) return;
    this.#settled = true;
    if (this.#waiting !== null) clearTimeout(this.#waiting);
    this.#onSettle(this);
  }
}
