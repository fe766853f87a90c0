import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../auth/principal.ts';
import type { RequestContext } from '../gateway/request-context.ts';
import type { RequestTrail } from '../request-log/request-trail.ts';
import { ClientAbort } from './client-abort.ts';

/** The pipeline's view of an authenticated `/v1` request; it aborts when the client leaves. */
class HttpRequestContext implements RequestContext {
  readonly requestId: string;
  readonly principal: Principal;
  readonly userPath: string;
  readonly startedAt: number;
  readonly abort: ClientAbort;
  readonly trail: RequestTrail | null;

  constructor(request: FastifyRequest, reply: FastifyReply) {
    this.requestId = request.id;
    this.principal = request.principal;
    this.userPath = request.userPath;
    this.startedAt = request.startedAt;
    this.abort = new ClientAbort(reply.raw);
    // Its release runs just before Fastify writes an answer (hooks.ts, the onSend hook).
    request.clientAbort = this.abort;
    const trail = request.trail ?? null;
    this.trail = trail;
    // No response hook runs for a client that left: the trail settles on its own then.
    this.abort.watcher = trail;
  }

  /** Made on first read only (see ClientAbort). */
  get signal(): AbortSignal {
    return this.abort.signal;
  }
}

export function requestContextOf(request: FastifyRequest, reply: FastifyReply): RequestContext & { readonly abort: ClientAbort } {
  return new HttpRequestContext(request, reply);
}
