import { STATUS_CODES, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyBaseLogger } from 'fastify';
import { renderEnvelope } from '../errors/envelope.ts';
import { invalidRequest, type GatewayError } from '../errors/gateway-error.ts';
import { isDiscardingBody } from './oversized-body.ts';

/** What Node's HTTP server reports on a connection before (or instead of) a request: parser errors, timeouts. */
interface ConnectionError extends Error {
  code?: string;
  reason?: string;
}

/**
 * Errors of Node's HTTP parser and the request timeouts (CONTRACT section 4): a request that never
 * becomes a request (bad header names, NUL bytes, Content-Length with chunked encoding, headers too
 * large, too slow) is answered with the envelope too, on the raw socket, which is then closed.
 */
export function clientErrorHandler(logger: FastifyBaseLogger): (error: ConnectionError, socket: Socket) => void {
  return (error, socket) => {
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    if (!isDiscardingBody(socket) && socket.writable && !responseStarted(socket)) {
      const gatewayError = clientErrorOf(error);
      logger.info({ status: gatewayError.status, code: gatewayError.code, reason: error.code }, gatewayError.message);
      socket.write(rawResponse(gatewayError));
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

function rawResponse(error: GatewayError): string {
  const body = JSON.stringify(renderEnvelope(error));
  const head = [
    `HTTP/1.1 ${error.status} ${STATUS_CODES[error.status] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    'Connection: close',
  ];
  return `${head.join('\r\n')}\r\n\r\n${body}`;
}

/** Node's own rule: never write over an answer already under way on this socket (`_httpMessage` is its current response). */
function responseStarted(socket: Socket): boolean {
  const current = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
  return current?.headersSent === true;
}
