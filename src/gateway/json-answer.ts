import { providerError } from '../errors/gateway-error.ts';
import { mapUpstreamError } from '../providers/upstream-errors.ts';
import { appendProvider, type UsageObject } from '../streaming/chat-chunk.ts';
import { isJsonObject } from '../core/json.ts';

/** A non-streaming upstream answer, checked and stamped with the serving instance. */
export interface JsonAnswer {
  /** The JSON text sent to the client. */
  body: string;
  /** The parsed answer (before the `provider` stamp). */
  parsed: Record<string, unknown>;
  usage: UsageObject | null;
}

export interface JsonAnswerOptions {
  /** An empty payload array counts as missing (chat answers need at least one choice). */
  requireItems?: boolean;
  /** `JSON.stringify(provider)`, when the caller has it already. */
  providerJson?: string;
}

/**
 * Checks a 2xx JSON answer of an endpoint whose payload lives in `payloadField` (`choices`
 * for chat, `data` for embeddings, `output` for responses) and stamps `provider` on it. A 200
 * that carries only an `error` (as some aggregators send) is an upstream error; one without
 * the payload is a provider error, which fails over like any 5xx.
 */
export function readJsonAnswer(text: string, provider: string, payloadField: string, options: JsonAnswerOptions = {}): JsonAnswer {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw providerError(`upstream ${provider} returned a body that is not JSON`, { provider, code: 'invalid_upstream_response' });
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw providerError(`upstream ${provider} returned a body that is not a JSON object`, { provider, code: 'invalid_upstream_response' });
  }
  const answer = parsed as Record<string, unknown>;
  const payload = answer[payloadField];
  if (!Array.isArray(payload) || (options.requireItems === true && payload.length === 0)) {
    const error = answer['error'];
    if (error !== undefined && error !== null) throw mapUpstreamError(embeddedStatus(error), text, provider);
    throw providerError(`upstream ${provider} returned no ${payloadField}`, { provider, code: 'invalid_upstream_response' });
  }
  const usage = isJsonObject(answer['usage']) ? answer['usage'] : null;
  const body = Object.hasOwn(answer, 'provider')
    ? JSON.stringify({ ...answer, provider })
    : appendProvider(text, options.providerJson ?? JSON.stringify(provider));
  return { body, parsed: answer, usage };
}

function embeddedStatus(error: unknown): number {
  const code = isJsonObject(error) ? error['code'] : undefined;
  return typeof code === 'number' && code >= 400 && code <= 599 ? code : 502;
}
