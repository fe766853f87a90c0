import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RequestContext } from '../gateway/request-context.ts';
import { clientAbortSignal } from './client-abort.ts';

/** The pipeline's view of an authenticated `/v1` request; its signal aborts when the client leaves. */
export function requestContextOf(request: FastifyRequest, reply: FastifyReply): RequestContext {
  return {
    requestId: request.id,
    principal: request.principal,
    userPath: request.userPath,
    startedAt: request.startedAt,
    signal: clientAbortSignal(reply),
  };
}
