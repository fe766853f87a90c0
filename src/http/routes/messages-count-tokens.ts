import type { FastifyInstance, FastifyRequest } from 'fastify';
import { countTokensEndpoint, runCountTokens } from '../../gateway/messages/count-tokens.ts';
import type { ChatPipelineDependencies } from '../../gateway/pipeline-dependencies.ts';
import { clientClosedRequest } from '../client-abort.ts';
import { jsonBodyOf } from '../json-body.ts';
import { requestContextOf } from '../request-context.ts';

/** Names how the count was made when the gateway estimated it (`estimate`). */
export const tokenCountHeader = 'x-gateway-token-count';

/** The Messages API's own request headers, forwarded to instances that speak it natively. */
const apiHeaders = ['anthropic-version', 'anthropic-beta'];

/** `anthropic-version` and `anthropic-beta` as the client sent them (repeated headers joined). */
export function messagesApiHeaders(request: FastifyRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const name of apiHeaders) {
    const value = request.headers[name];
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  return headers;
}

/** `POST /v1/messages/count_tokens` (Anthropic's dialect, errors included). */
export function registerCountTokensRoute(app: FastifyInstance, dependencies: ChatPipelineDependencies): void {
  app.post(countTokensEndpoint, async (request, reply) => {
    const context = requestContextOf(request, reply);
    const signal = context.signal;
    const outcome = await runCountTokens(jsonBodyOf(request.body), messagesApiHeaders(request), context, dependencies).catch(
      (error: unknown) => {
        throw signal.aborted ? clientClosedRequest() : error;
      },
    );
    // Counting reads no model output and costs nothing: the record carries no usage (recorded by the pipeline).
    context.abort.whenClosed(outcome.admission.release);
    request.logFields = { provider: outcome.target.adapter.name, model: outcome.target.model };
    reply.headers(outcome.admission.headers);
    if (outcome.result.estimate) reply.header(tokenCountHeader, 'estimate');
    return reply.header('content-type', 'application/json; charset=utf-8').send(outcome.result.body);
  });
}
