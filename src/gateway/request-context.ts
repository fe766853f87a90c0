import type { AbortSource } from '../core/abort-source.ts';
import type { Principal } from '../auth/principal.ts';
import type { RequestTrail } from '../request-log/request-trail.ts';

/** What the HTTP layer learned about a request before the pipeline runs. */
export interface RequestContext {
  readonly requestId: string;
  readonly principal: Principal;
  /** The normalised user path (CONTRACT section 3). */
  readonly userPath: string;
  /** `performance.now()` when the request arrived, for latency. */
  readonly startedAt: number;
  /** Aborted when the client goes away. */
  readonly signal: AbortSignal;
  /** The same, without making an AbortSignal (see ClientAbort), when the HTTP layer has it. */
  readonly abort?: AbortSource;
  /** What the request log learns along the way; absent when the log is off. */
  readonly trail?: RequestTrail | null;
}
