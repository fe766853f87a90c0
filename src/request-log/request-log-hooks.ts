import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { toGatewayError } from '../errors/envelope.ts';
import { buildEntry, type BodyPolicy } from './request-log-entry.ts';
import type { RequestLogRecorder } from './request-log-recorder.ts';
import { RequestTrail } from './request-trail.ts';

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
  recorder: RequestLogRecorder;
}

/**
 * Installs the request log on the model API's scope (before authentication, so a 401 is
 * logged too): a trail per model request, the error kept as the error hook sees it, the
 * response body when bodies are kept, and the entry queued when the response ends (or, for a
 * client that left, when the pipeline has reported).
 */
export function installRequestLog(v1: FastifyInstance, options: RequestLogHookOptions): void {
  const { recorder } = options;
  const settle = (request: FastifyRequest, reply: FastifyReply, trail: RequestTrail): void => {
    recorder.record(buildEntry(request, reply, trail, options));
  };
  v1.decorateRequest('trail', null);
  v1.addHook('onRequest', (request, reply, done) => {
    if (modelEndpoints.has(request.routeOptions.url ?? '')) {
      const trail: RequestTrail = new RequestTrail(() => settle(request, reply, trail));
      request.trail = trail;
    }
    done();
  });
  v1.addHook('onError', (request, _reply, error, done) => {
    const trail = request.trail;
    if (trail) {
      trail.error = toGatewayError(error);
      if (trail.clientGone) trail.settle();
    }
    done();
  });
  if (options.bodies !== 'off') {
    v1.addHook('onSend', (request, _reply, payload, done) => {
      const trail = request.trail;
      if (trail && typeof payload === 'string') trail.responseBody = payload;
      done(null, payload);
    });
  }
  v1.addHook('onResponse', (request, _reply, done) => {
    request.trail?.settle();
    done();
  });
}
