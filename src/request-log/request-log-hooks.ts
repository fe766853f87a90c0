import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  onErrorHookHandler,
  onRequestHookHandler,
  onResponseHookHandler,
  onSendHookHandler,
  RouteOptions,
} from 'fastify';
import { toGatewayError } from '../errors/envelope.ts';
import { buildEntry, type BodyPolicy } from './request-log-entry.ts';
import type { RequestLogRecorder } from './request-log-recorder.ts';
import { RequestTrail } from './request-trail.ts';
import type { RequestLogEntry } from './request-log-store.ts';
import { traceContextOf } from '../core/trace-context.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set on model endpoints while the request log is on. */
    trail?: RequestTrail | null;
  }
}

/** The routes that call models: one entry per request on them, whatever its outcome. */
const modelEndpoints = new Set([
  '/v1/chat/completions',
  '/v1/completions',
  '/v1/embeddings',
  '/v1/responses',
  '/v1/messages',
  '/v1/moderations',
  '/v1/images/generations',
  '/v1/images/edits',
  '/v1/images/variations',
  '/v1/audio/speech',
  '/v1/audio/transcriptions',
  '/v1/audio/translations',
  '/p/:instance',
  '/p/:instance/*',
]);

export interface RequestLogHookOptions extends BodyPolicy {
  /** Null while the request log is off but traces or metrics read the entries. */
  recorder: RequestLogRecorder | null;
  /** Tracing is on: each trail gets the request's W3C trace context at its start. */
  traced?: boolean;
  /** Also given each settled entry (traces, metrics). */
  observe?: ((entry: RequestLogEntry, trail: RequestTrail, request: FastifyRequest) => void) | null;
}

/**
 * Installs the request log on the model endpoints of the model API's scope, as hooks of those
 * routes only (nothing runs on other routes): a trail per request (made by the error hook when
 * authentication refused the request before the route's own hooks), the error as the error
 * hook sees it, the response body when bodies are kept, and the entry queued when the
 * response ends (or, for a client that left, when the pipeline has reported). Call it before
 * the routes are registered.
 */
export function installRequestLog(v1: FastifyInstance, options: RequestLogHookOptions): void {
  v1.decorateRequest('trail', null);
  v1.addHook('onRoute', (route) => {
    if (modelEndpoints.has(route.url)) addRouteHooks(route, route.url, options);
  });
}

function addRouteHooks(route: RouteOptions, endpoint: string, options: RequestLogHookOptions): void {
  const { recorder, traced = false } = options;
  const observe = options.observe ?? null;
  // One settle function per route: a trail carries its request and reply, so a request makes no closure.
  const settle = (trail: RequestTrail): void => {
    const { request, reply } = trail;
    if (request === null || reply === null) return;
    const entry = buildEntry(request, reply, trail, options);
    recorder?.record(entry);
    observe?.(entry, trail, request);
  };
  const open = (request: FastifyRequest, reply: FastifyReply): RequestTrail => {
    const trail = new RequestTrail(endpoint, settle, request, reply);
    if (traced) trail.trace = traceContextOf(request.headers.traceparent, request.headers.tracestate);
    request.trail = trail;
    return trail;
  };
  const onRequest: onRequestHookHandler = (request, reply, done) => {
    open(request, reply);
    done();
  };
  const onError: onErrorHookHandler = (request, reply, error, done) => {
    const trail = request.trail ?? open(request, reply);
    trail.error = toGatewayError(error);
    if (trail.clientGone) trail.settle();
    done();
  };
  const onResponse: onResponseHookHandler = (request, _reply, done) => {
    request.trail?.settle();
    done();
  };
  route.onRequest = [onRequest, ...hookList(route.onRequest)];
  route.onError = [onError, ...hookList(route.onError)];
  route.onResponse = [onResponse, ...hookList(route.onResponse)];
  if (options.bodies !== 'off') {
    const onSend: onSendHookHandler = (request, _reply, payload, done) => {
      const trail = request.trail;
      if (trail && typeof payload === 'string') trail.responseBody = payload;
      done(null, payload);
    };
    route.onSend = [onSend, ...hookList(route.onSend)];
  }
}

function hookList<Hook>(hooks: Hook | Hook[] | undefined): Hook[] {
  if (hooks === undefined) return [];
  return Array.isArray(hooks) ? hooks : [hooks];
}
