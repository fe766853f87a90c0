import type { OutgoingHttpHeaders } from 'node:http';
import type { FastifyInstance } from 'fastify';
import type { ChatPipelineDependencies } from '../../gateway/chat-completions.ts';
import { relayResponsesStream } from '../../gateway/responses/relay-responses-stream.ts';
import { createResponsesPipeline } from '../../gateway/responses/run-responses.ts';
import { notFound } from '../../errors/gateway-error.ts';
import { clientClosedRequest } from '../client-abort.ts';
import { jsonBodyOf } from '../json-body.ts';
import { requestContextOf } from '../request-context.ts';

const streamHeaders = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
};

/**
 * `POST /v1/responses` (OpenAI's Responses API, JSON or SSE, any provider behind). The
 * gateway stores no responses: retrieving or deleting one by id answers 404.
 */
export function registerResponsesRoutes(app: FastifyInstance, dependencies: ChatPipelineDependencies): void {
  const run = createResponsesPipeline(dependencies);
  app.post('/v1/responses', async (request, reply) => {
    const context = requestContextOf(request, reply);
    const outcome = await run(jsonBodyOf(request.body), context).catch((error: unknown) => {
      throw context.signal.aborted ? clientClosedRequest() : error;
    });
    const provider = outcome.target.adapter.name;
    request.logFields = { provider, model: outcome.target.model };
    if (outcome.attempts.length > 1) request.logFields['attempts'] = outcome.attempts;
    // Slots are held until the response has ended, whether it finished or the client left.
    context.abort.whenClosed(outcome.admission.release);
    reply.headers(outcome.admission.headers);
    const result = outcome.result;
    if (result.kind === 'json') {
      outcome.report(200, result.usage);
      return reply.header('content-type', 'application/json; charset=utf-8').send(result.body);
    }
    reply.hijack();
    reply.raw.writeHead(200, { ...(reply.getHeaders() as OutgoingHttpHeaders), ...streamHeaders });
    const relay = await relayResponsesStream(result.upstream, reply.raw, result.translator, provider, context.signal);
    if (request.trail) request.trail.firstByteAt = relay.firstByteAt ?? null;
    outcome.report(relay.clientClosed ? 499 : relay.error !== null ? 502 : 200, relay.usage);
    const ending = relay.error !== null ? 'upstream_error' : relay.clientClosed ? 'client_closed' : 'completed';
    request.logFields = { ...request.logFields, stream: true, stream_end: ending };
    if (relay.error !== null)
      request.log.warn({ request_id: request.id, ...request.logFields, reason: String(relay.error) }, 'stream broken by upstream');
    return reply;
  });
  const notStored = async (request: { params: { id: string } }): Promise<never> => {
    throw notFound(`response ${request.params.id} not found: the gateway does not store responses`, { code: 'response_not_found' });
  };
  app.get<{ Params: { id: string } }>('/v1/responses/:id', notStored);
  app.delete<{ Params: { id: string } }>('/v1/responses/:id', notStored);
}
