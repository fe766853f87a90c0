import { randomBytes } from 'node:crypto';
import { providerError } from '../../errors/gateway-error.ts';
import { isRecord, text, type GeminiPart, type Json } from './wire.ts';

/**
 * Gemini finish reasons as OpenAI's: MAX_TOKENS -> length; the blocking reasons (SAFETY,
 * RECITATION, BLOCKLIST, PROHIBITED_CONTENT, SPII, IMAGE_SAFETY, LANGUAGE) -> content_filter;
 * STOP with function calls -> tool_calls; everything else (STOP, OTHER,
 * MALFORMED_FUNCTION_CALL, ...) -> stop.
 */
export function mapFinishReason(reason: string | undefined, hasToolCalls: boolean): string {
  switch (reason) {
    case 'MAX_TOKENS':
      return 'length';
    case 'SAFETY':
    case 'RECITATION':
    case 'BLOCKLIST':
    case 'PROHIBITED_CONTENT':
    case 'SPII':
    case 'IMAGE_SAFETY':
    case 'LANGUAGE':
      return 'content_filter';
    default:
      return hasToolCalls ? 'tool_calls' : 'stop';
  }
}

const count = (value: unknown): number => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);

/**
 * `usageMetadata` in OpenAI's shape: prompt = promptTokenCount (cached tokens are part of it,
 * as in OpenAI's usage, reported as `cached_tokens`), completion = candidatesTokenCount +
 * thoughtsTokenCount (thinking is billed as output; reported as `reasoning_tokens`), plus
 * tool-use prompt tokens in the prompt. The upstream object is kept as `raw_usage`.
 */
export function convertUsage(usage: Json): Json {
  const prompt = count(usage['promptTokenCount']) + count(usage['toolUsePromptTokenCount']);
  const thoughts = count(usage['thoughtsTokenCount']);
  const completion = count(usage['candidatesTokenCount']) + thoughts;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: count(usage['cachedContentTokenCount']) },
    completion_tokens_details: { reasoning_tokens: thoughts },
    raw_usage: usage,
  };
}

/** An OpenAI-style tool call id for a Gemini function call (which has none, or its own `id`). */
export function toolCallId(call: Json): string {
  return text(call['id']) ?? `call_${randomBytes(12).toString('hex')}`;
}

/** A function call part as an OpenAI tool call, its thought signature kept where Google's OpenAI API puts it. */
export function toolCallOf(part: GeminiPart, id: string): Json {
  const call = part.functionCall ?? { name: '' };
  const toolCall: Json = {
    id,
    type: 'function',
    function: { name: call.name, arguments: JSON.stringify(isRecord(call.args) ? call.args : {}) },
  };
  if (part.thoughtSignature !== undefined) toolCall['extra_content'] = { google: { thought_signature: part.thoughtSignature } };
  return toolCall;
}

export interface ResponseOptions {
  /** Unix seconds stamped as `created`. */
  created: number;
}

/**
 * A `GenerateContentResponse` as an OpenAI chat completion: one choice per candidate, text
 * parts joined as `content`, `thought: true` parts as `reasoning_content`, function calls as
 * `tool_calls` (ids generated), the candidate's `safetyRatings` as `safety_ratings`
 * (`citationMetadata`, `groundingMetadata` as `citation_metadata`, `grounding_metadata`),
 * and the answer's `promptFeedback` (why a prompt was blocked) as `prompt_feedback`.
 */
export function fromGenerateContentResponse(json: Json, model: string, options: ResponseOptions = { created: now() }): Json {
  const candidates = Array.isArray(json['candidates']) ? json['candidates'].filter(isRecord) : [];
  const blocked = isRecord(json['promptFeedback']) && json['promptFeedback']['blockReason'] !== undefined;
  const choices = candidates.map((candidate, position) => choiceOf(candidate, position));
  if (choices.length === 0) {
    const message = { role: 'assistant', content: '' };
    choices.push({ index: 0, message, logprobs: null, finish_reason: blocked ? 'content_filter' : 'stop' });
  }
  const completion: Json = {
    id: responseIdOf(json),
    object: 'chat.completion',
    created: options.created,
    model: text(json['modelVersion']) ?? model,
    choices,
    usage: convertUsage(isRecord(json['usageMetadata']) ? json['usageMetadata'] : {}),
  };
  if (isRecord(json['promptFeedback'])) completion['prompt_feedback'] = json['promptFeedback'];
  return completion;
}

function choiceOf(candidate: Json, position: number): Json {
  const content = isRecord(candidate['content']) ? candidate['content'] : {};
  const parts = (Array.isArray(content['parts']) ? content['parts'] : []).filter(isRecord) as GeminiPart[];
  const answer: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: Json[] = [];
  for (const part of parts) {
    if (part.functionCall !== undefined) toolCalls.push(toolCallOf(part, toolCallId(part.functionCall)));
    else if (typeof part.text === 'string') (part.thought === true ? reasoning : answer).push(part.text);
  }
  const message: Json = { role: 'assistant', content: answer.length === 0 && toolCalls.length > 0 ? null : answer.join('') };
  if (reasoning.length > 0) message['reasoning_content'] = reasoning.join('');
  if (toolCalls.length > 0) message['tool_calls'] = toolCalls;
  const choice: Json = {
    index: typeof candidate['index'] === 'number' ? candidate['index'] : position,
    message,
    logprobs: null,
    finish_reason: mapFinishReason(text(candidate['finishReason']), toolCalls.length > 0),
  };
  return { ...choice, ...candidateExtras(candidate) };
}

/** The candidate fields OpenAI has no place for, kept under snake_case names. */
export function candidateExtras(candidate: Json): Json {
  const extras: Json = {};
  if (Array.isArray(candidate['safetyRatings'])) extras['safety_ratings'] = candidate['safetyRatings'];
  if (isRecord(candidate['citationMetadata'])) extras['citation_metadata'] = candidate['citationMetadata'];
  if (isRecord(candidate['groundingMetadata'])) extras['grounding_metadata'] = candidate['groundingMetadata'];
  return extras;
}

export function responseIdOf(json: Json): string {
  const id = text(json['responseId']);
  return id === undefined ? `chatcmpl-${randomBytes(12).toString('hex')}` : `chatcmpl-${id}`;
}

const now = (): number => Math.floor(Date.now() / 1000);

/** Reads a `generateContent` answer; a body of another shape is the upstream's fault (502). */
export function parseGenerateContentResponse(body: string, provider: string): Json {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    parsed = undefined;
  }
  if (!isRecord(parsed) || (!Array.isArray(parsed['candidates']) && !isRecord(parsed['promptFeedback']))) {
    throw providerError(`upstream ${provider} returned a body that is not a Gemini GenerateContentResponse`, {
      provider,
      code: 'invalid_upstream_response',
    });
  }
  return parsed;
}
