import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { invalidRequest, type GatewayError } from '../errors/gateway-error.ts';
import { errorBody } from './hooks.ts';
import { isDiscardingBody } from './oversized-body.ts';

/** What Node's HTTP server reports on a connection before (or instead of) a request: parser errors, timeouts. */
interface ConnectionError extends Error {
  code?: string;
  reason?: string;
}

/**
 * Errors of Node's HTTP parser and the request timeouts (CONTRACT section 4): a request that never
 * becomes a request (bad header names, NUL bytes, Content-Length with chunked encoding, headers too
 * large, too slow) is answered with the envelope too, on the raw socket, which is then closed. A
 * request already under way (a body too slow) is answered in its route's dialect (`/v1/messages`).
 */
export function clientErrorHandler(logger: FastifyBaseLogger): (error: ConnectionError, socket: Socket) => void {
  return (error, socket) => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    const current = currentResponse(socket);
    if (!isDiscardingBody(socket) && socket.writable && current?.headersSent !== true) {
      const gatewayError = clientErrorOf(error);
      // Debug only: anyone can send these, as often as they like.
      logger.debug({ status: gatewayError.status, code: gatewayError.code, reason: error.code }, gatewayError.message);
      socket.write(rawResponse(gatewayError, current?.req.url ?? ''));
    }
    socket.destroy();
  };
}

export function clientErrorOf(error: ConnectionError): GatewayError {
  switch (error.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return invalidRequest('the request did not arrive in time (HEADERS_TIMEOUT_SECONDS, BODY_TIMEOUT_SECONDS)', {
        status: 408,
        code: 'request_timeout',
      });
    case 'HPE_HEADER_OVERFLOW':
      return invalidRequest('the request headers are too large', { status: 431, code: 'headers_too_large' });
    default: {
      const reason = typeof error.reason === 'string' && error.reason !== '' ? error.reason : 'unreadable request';
      return invalidRequest(`malformed HTTP request: ${reason}`, { code: 'malformed_request' });
    }
  }
}

function rawResponse(error: GatewayError, url: string): string {
  const body = JSON.stringify(errorBody(url, error));
  const head = [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  ];
  return `${head.join('\r\n')}\r\n\r\n${body}`;
}

/**
 * The response of the request under way on this socket, if any (`_httpMessage`, as Node's own
 * `clientError` default reads it): never write over an answer that has started.
 */
function currentResponse(socket: Socket): ServerResponse | null {
  return (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage ?? null;
}
