import { convertChatRequest } from '../anthropic/convert-chat-request.ts';
import type { ChatRequestBody, MessagesApiRequest } from '../provider.ts';

/** The `anthropic_version` Claude on Vertex takes in the body (instead of a header). */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/** A Messages body as Vertex's rawPredict takes it: no `model` (it is in the URL), the Vertex version added. */
export function toRawPredictBody(messages: Record<string, unknown>): Record<string, unknown> {
  const { model: _model, ...rest } = messages;
  return { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...rest };
}

/** An OpenAI chat request as the rawPredict body of Claude on Vertex. */
export function chatToRawPredict(request: ChatRequestBody, provider: string): Record<string, unknown> {
  return toRawPredictBody({ ...convertChatRequest(request, { provider }) });
}

/**
 * The client's Messages API headers as Vertex takes them: `anthropic-beta` is kept,
 * `anthropic-version` is dropped (the body carries Vertex's).
 */
export function vertexMessagesHeaders(request: MessagesApiRequest): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) if (name.toLowerCase() !== 'anthropic-version') headers[name] = value;
  return headers;
}
