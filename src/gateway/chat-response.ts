import { providerError } from '../errors/gateway-error.ts';
import { mapUpstreamError } from '../providers/upstream-errors.ts';
import { appendProvider, type UsageObject } from '../streaming/chat-chunk.ts';

export interface FinishedResponse {
  body: string;
  usage: UsageObject | null;
}

/**
 * Checks a non-streaming upstream answer and stamps the serving instance on it. A 200 that
 * carries only an `error` (as some aggregators send) is an upstream error; one without
 * choices is a provider error.
 */
export function finishChatResponse(text: string, provider: string, providerJson: string): FinishedResponse {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw providerError(`upstream ${provider} returned a body that is not JSON`, { provider, code: 'invalid_upstream_response' });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw providerError(`upstream ${provider} returned a body that is not a JSON object`, { provider, code: 'invalid_upstream_response' });
  }
  const response = parsed as Record<string, unknown>;
  const choices = response['choices'];
  if (!Array.isArray(choices) || choices.length === 0) {
    if (response['error'] !== undefined) throw mapUpstreamError(embeddedStatus(response['error']), text, provider);
    throw providerError(`upstream ${provider} returned no choices`, { provider, code: 'invalid_upstream_response' });
  }
  const usage = typeof response['usage'] === 'object' && response['usage'] !== null ? (response['usage'] as UsageObject) : null;
  if (Object.hasOwn(response, 'provider')) {
    response['provider'] = provider;
    return { body: JSON.stringify(response), usage };
  }
  return { body: appendProvider(text, providerJson), usage };
}

function embeddedStatus(error: unknown): number {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  return typeof code === 'number' && code >= 400 && code <= 599 ? code : 502;
}
