import type { FastifyRequest } from 'fastify';
import type { RequestLogEntry } from '../request-log/request-log-store.ts';
import type { RequestTrail } from '../request-log/request-trail.ts';
import type { GatewayMetrics } from './metrics.ts';
import type { RequestTracer } from './tracing.ts';

export type EntryObserver = (entry: RequestLogEntry, trail: RequestTrail, request: FastifyRequest) => void;

/** What reads each settled request besides the request log: traces and model metrics; null when neither is on. */
export function entryObserver(tracer: RequestTracer | null, metrics: GatewayMetrics | null): EntryObserver | null {
  if (tracer === null && metrics === null) return null;
  return (entry, trail, request) => {
    metrics?.observeEntry(entry);
    tracer?.record({ entry, trail, startedAt: request.startedAt, method: request.method });
  };
}
