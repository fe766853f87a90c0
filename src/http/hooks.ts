import type { IncomingHttpHeaders } from 'node:http';
import { redactUrl } from '../observability/redact-url.ts';
import type { FastifyInstance } from 'fastify';
import { renderEnvelope, toGatewayError } from '../errors/envelope.ts';
import { GatewayError, notFound } from '../errors/gateway-error.ts';
import { isAnthropicDialectUrl, renderAnthropicError } from '../dialects/anthropic-messages/errors.ts';
import { isGeminiDialectUrl, renderGoogleError } from '../dialects/gemini/errors.ts';
import { isMcpUrl, jsonRpcCodes, jsonRpcError } from '../mcp/jsonrpc-errors.ts';
import type { GatewayMetrics } from '../observability/metrics.ts';
import { discardRestOfBody, type DiscardBounds } from './oversized-body.ts';
import { didYouMean } from '../core/closest-names.ts';
import type { Principal } from '../auth/principal.ts';
import type { ClientAbort } from './client-abort.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's client abort, once a route made its context (request-context.ts). */
    clientAbort: ClientAbort | null;
  }
}

/**
 * Hooks every request passes: the request id echoed, the 503 while draining, and one log line
 * (plus metrics) when the response ends, streams included.
 */
export function installRequestHooks(app: FastifyInstance, metrics: GatewayMetrics | null, infoEnabled: boolean): void {
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  app.addHook('onRequest', (request, reply, done) => {
    request.startedAt = performance.now();
    reply.header('x-request-id', request.id);
    // Anthropic's SDK reads the id from `request-id` (its `_request_id`).
    if (anthropicDialect(request.url, request.headers)) reply.header('request-id', request.id);
    if (!closing) return done();
    const error = new GatewayError('provider_error', 'the gateway is shutting down', { status: 503, code: 'shutting_down' });
    void reply
      .code(503)
      .header('connection', 'close')
      .send(errorBody(request.url, error, request.headers));
  });
  installReleaseHook(app);
  // Nobody reads the completion hook's work (no info log line, no metrics): spare every request the hook.
  if (!infoEnabled && metrics === null) return;
  app.addHook('onResponse', (request, reply, done) => {
    const durationMs = reply.elapsedTime;
    const fields = request.logFields;
    if (infoEnabled) {
      request.log.info(
        {
          request_id: request.id,
          ...fields,
          method: request.method,
          url: redactUrl(request.url),
          status: reply.statusCode,
          duration_ms: Math.round(durationMs),
        },
        'request completed',
      );
    }
    metrics?.observe({
      endpoint: request.routeOptions.url ?? 'unmatched',
      provider: typeof fields?.['provider'] === 'string' ? fields['provider'] : 'gateway',
      status: reply.statusCode,
      stream: fields?.['stream'] === true,
      durationSeconds: durationMs / 1000,
    });
    done();
  });
}

/**
 * An answer Fastify sends (JSON, an error) runs its request's `ClientAbort.whenClosed` listener
 * (the admission's release) just before the payload is written: observed through the hook,
 * not by patching the response (streams call it from the relay engine, REVIEW.md).
 */
function installReleaseHook(app: FastifyInstance): void {
  app.decorateRequest('clientAbort', null);
  app.addHook('onSend', (request, _reply, payload, done) => {
    request.clientAbort?.ending();
    done(null, payload);
  });
}

/**
 * Dialect switch: `/v1/messages` (Anthropic's Messages API) and `/v1/files` asked with
 * `anthropic-version` (Anthropic's Files API) render errors in Anthropic's envelope, Gemini's
 * routes (`/v1beta/...`, `/upload/v1beta/...`) in Google's, every other route in the gateway's
 * (CONTRACT section 4). Same status and headers.
 */
export function errorBody(url: string, error: GatewayError, headers: IncomingHttpHeaders = {}): unknown {
  if (isGeminiDialectUrl(url) || url.startsWith('/upload/v1beta/')) return renderGoogleError(error);
  // An MCP body that is not JSON is a JSON-RPC parse error (mcp/jsonrpc-errors.ts).
  if (error.code === 'invalid_json' && isMcpUrl(url)) return jsonRpcError(null, jsonRpcCodes.parseError, `Parse error: ${error.message}`);
  return anthropicDialect(url, headers) ? renderAnthropicError(error) : renderEnvelope(error);
}

/** `/v1/messages` and below, or `/v1/files` and below from the Anthropic SDK (it always sends `anthropic-version`). */
function anthropicDialect(url: string, headers: IncomingHttpHeaders): boolean {
  if (url.startsWith('/v1/messages')) return isAnthropicDialectUrl(url);
  return (
    (url === '/v1/files' || url.startsWith('/v1/files/') || url.startsWith('/v1/files?')) &&
    typeof headers['anthropic-version'] === 'string'
  );
}

/**
 * "Did you mean ...": an error's suggestions (the closest model names) appended to its message,
 * only for a caller without a model allowlist: names outside an allowlist stay hidden, as
 * `GET /v1/models` hides them. Unauthenticated requests never get this far.
 */
function withSuggestions(error: GatewayError, principal: Principal | null): GatewayError {
  if (error.suggestions.length === 0 || principal === null || (principal.allowedModels ?? null) !== null) return error;
  return new GatewayError(error.type, `${error.message}${didYouMean(error.suggestions)}`, {
    code: error.code,
    param: error.param,
    provider: error.provider,
    status: error.status,
    headers: error.headers,
    cause: error.cause,
  });
}

/**
 * The one place errors become responses: every route, every framework error, unknown routes. (Errors
 * before a request exists, from the HTTP parser, are answered by client-errors.ts.)
 */
export function installErrorHandlers(app: FastifyInstance, discardBounds: DiscardBounds): void {
  app.setErrorHandler((error, request, reply) => {
    const gatewayError = withSuggestions(toGatewayError(error, request.routeOptions.bodyLimit), request.principal as Principal | null);
    const requestId = request.id;
    // A 413 sent while the client still uploads: read the rest away so that the client sees it.
    if (gatewayError.code === 'body_too_large') discardRestOfBody(request.raw, discardBounds);
    if (gatewayError.type === 'internal_error') request.log.error({ request_id: requestId, err: error }, 'unhandled error');
    else if (gatewayError.code === 'storage_unavailable')
      request.log.error({ request_id: requestId, reason: String(gatewayError.cause) }, gatewayError.message);
    else request.log.debug({ request_id: requestId, code: gatewayError.code, status: gatewayError.status }, gatewayError.message);
    return reply
      .code(gatewayError.status)
      .headers(gatewayError.headers)
      .send(errorBody(request.url, gatewayError, request.headers));
  });
  app.setNotFoundHandler((request, reply) => {
    const error = notFound(`unknown route: ${request.method} ${request.url.split('?')[0]}`, { code: 'unknown_route' });
    return reply.code(404).send(errorBody(request.url, error, request.headers));
  });
}
