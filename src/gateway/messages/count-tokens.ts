import { invalidRequest, providerError } from '../../errors/gateway-error.ts';
import { messagesApiFor } from '../../providers/provider.ts';
import type { ChatPipelineDependencies } from '../pipeline-dependencies.ts';
import { bodyOnly, callCodec, runCall, type ExecutedOutcome } from '../endpoints/call-codec.ts';
import { readModelFields, upstreamBodyOf } from '../model-fields.ts';
import type { RequestContext } from '../request-context.ts';
import type { ResolvedTarget } from '../../routing/resolve-model.ts';
import { estimateInputTokens } from '../../dialects/anthropic-messages/token-estimate.ts';
import { isObject } from '../../dialects/anthropic-messages/wire.ts';

export const countTokensEndpoint = '/v1/messages/count_tokens';
/** Counting reads no model output and costs nothing: the record carries no usage. */
const countTokensCodec = callCodec<TokenCount>(countTokensEndpoint, (count) => bodyOnly(count.body));

export interface TokenCount {
  /** The JSON answer, `{"input_tokens": n}`. */
  body: string;
  /** True when the gateway estimated the count (the instance has no native count). */
  estimate: boolean;
}

/**
 * `POST /v1/messages/count_tokens` under the model pipeline (limits, budgets, failover,
 * usage record): instances that speak the Messages API count natively; for any other the
 * gateway estimates with a tokenizer (token-estimate.ts) and says so.
 */
export function runCountTokens(
  input: unknown,
  headers: Record<string, string>,
  context: RequestContext,
  dependencies: ChatPipelineDependencies,
): Promise<ExecutedOutcome<TokenCount>> {
  const { body, selector, hint } = readModelFields(input);
  if (!Array.isArray(body['messages'])) {
    const code = body['messages'] === undefined ? 'missing_field' : 'invalid_body';
    throw invalidRequest('messages: must be an array of messages', { code, param: 'messages' });
  }
  const call = async (target: ResolvedTarget): Promise<TokenCount> => {
    const api = messagesApiFor(target.adapter, target.model);
    if (api === undefined) return { body: JSON.stringify({ input_tokens: await estimateInputTokens(body) }), estimate: true };
    const text = await api.countTokens({ body: upstreamBodyOf(body, target.model), headers }, context);
    return { body: checkedCount(text, target.adapter.name), estimate: false };
  };
  // Counting bills nothing: no hold (a spent budget still refuses it).
  return runCall(countTokensCodec, { selector, hint, stream: false, body: null, call }, context, dependencies);
}

/** A native answer must carry `input_tokens`; anything else fails the attempt like a 5xx. */
function checkedCount(text: string, provider: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = null;
  }
  if (isObject(parsed) && typeof parsed['input_tokens'] === 'number') return text;
  throw providerError(`upstream ${provider} returned no input_tokens`, { provider, code: 'invalid_upstream_response' });
}
