import { invalidRequest, type GatewayError } from '../errors/gateway-error.ts';
import type { FastifyReply } from 'fastify';

/** A signal aborted when the client goes away before its response is finished. */
export function clientAbortSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  const raw = reply.raw;
  raw.once('close', () => {
    if (!raw.writableFinished) controller.abort();
  });
  return controller.signal;
}

/** What a request whose client went away ends with (logged; nobody is left to read it). */
export function clientClosedRequest(): GatewayError {
  return invalidRequest('the client closed the request', { status: 499, code: 'client_closed_request' });
}
