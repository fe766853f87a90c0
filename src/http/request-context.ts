import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RequestContext } from '../gateway/request-context.ts';
import { ClientAbort } from './client-abort.ts';

/** The pipeline's view of an authenticated `/v1` request; it aborts when the client leaves. */
export function requestContextOf(request: FastifyRequest, reply: FastifyReply): RequestContext {
  const abort = new ClientAbort(reply.raw);
  return {
    requestId: request.id,
    principal: request.principal,
    userPath: request.userPath,
    startedAt: request.startedAt,
    abort,
    // Made on first read only (see ClientAbort).
    get signal() {
      return abort.signal;
    },
  };
}
