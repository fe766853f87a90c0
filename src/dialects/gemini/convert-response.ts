import {
  isObject,
  type Candidate,
  type FinishReason,
  type GenerateContentResponse,
  type JsonObject,
  type Part,
  type UsageMetadata,
} from './wire.ts';

/**
 * An OpenAI chat completion as a Gemini `GenerateContentResponse`: one candidate per choice
 * (reasoning as a `thought` part, then text, then one `functionCall` part per tool call),
 * the finish reason, `usageMetadata`, `modelVersion` (the model that answered) and
 * `responseId` (the completion's id, else the gateway's request id).
 */
export function toGenerateContentResponse(completion: JsonObject, model: string, requestId: string): GenerateContentResponse {
  const choices = Array.isArray(completion['choices']) ? (completion['choices'] as unknown[]) : [];
  const candidates = choices.filter(isObject).map((choice, position) => candidateOf(choice, position));
  const response: GenerateContentResponse = {
    candidates,
    modelVersion: modelOf(completion, model),
    responseId: idOf(completion, requestId),
  };
  const usage = toUsageMetadata(completion['usage']);
  if (usage !== null) response.usageMetadata = usage;
  return response;
}

function candidateOf(choice: JsonObject, position: number): Candidate {
  const message = isObject(choice['message']) ? choice['message'] : {};
  const parts: Part[] = [];
  const reasoning = message['reasoning_content'] ?? message['reasoning'];
  if (typeof reasoning === 'string' && reasoning !== '') parts.push({ text: reasoning, thought: true });
  const text = typeof message['content'] === 'string' ? message['content'] : message['refusal'];
  if (typeof text === 'string' && text !== '') parts.push({ text });
  const calls = Array.isArray(message['tool_calls']) ? (message['tool_calls'] as unknown[]) : [];
  for (const call of calls) if (isObject(call)) parts.push(functionCallPart(call['id'], call['function']));
  const index = typeof choice['index'] === 'number' ? choice['index'] : position;
  return { content: { role: 'model', parts }, finishReason: finishReasonOf(choice['finish_reason']), index };
}

/** A tool call as a `functionCall` part: arguments parsed back to an object. */
export function functionCallPart(id: unknown, fn: unknown): Part {
  const call = isObject(fn) ? fn : {};
  const name = typeof call['name'] === 'string' ? call['name'] : '';
  const args = argumentsOf(call['arguments']);
  return { functionCall: typeof id === 'string' && id !== '' ? { id, name, args } : { name, args } };
}

function argumentsOf(text: unknown): unknown {
  if (typeof text !== 'string' || text.trim() === '') return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    // Models sometimes emit invalid JSON; the client still sees what they wrote.
    return { arguments: text };
  }
}

/** OpenAI's finish reasons in Gemini's vocabulary (a tool call ends with STOP there too). */
export function finishReasonOf(reason: unknown): FinishReason {
  switch (reason) {
    case 'stop':
    case 'tool_calls':
    case 'function_call':
    case null:
    case undefined:
      return 'STOP';
    case 'length':
      return 'MAX_TOKENS';
    case 'content_filter':
      return 'SAFETY';
    default:
      return 'OTHER';
  }
}

/**
 * OpenAI usage as `usageMetadata`. Gemini counts thoughts apart from the candidates
 * (`thoughtsTokenCount`), OpenAI inside `completion_tokens`: they are split out again.
 */
export function toUsageMetadata(usage: unknown): UsageMetadata | null {
  if (!isObject(usage)) return null;
  const prompt = count(usage['prompt_tokens']);
  const completion = count(usage['completion_tokens']);
  const thoughts = count(isObject(usage['completion_tokens_details']) ? usage['completion_tokens_details']['reasoning_tokens'] : 0);
  const cached = count(isObject(usage['prompt_tokens_details']) ? usage['prompt_tokens_details']['cached_tokens'] : 0);
  const total = typeof usage['total_tokens'] === 'number' ? usage['total_tokens'] : prompt + completion;
  const metadata: UsageMetadata = {
    promptTokenCount: prompt,
    candidatesTokenCount: Math.max(0, completion - thoughts),
    totalTokenCount: total,
  };
  if (thoughts > 0) metadata.thoughtsTokenCount = thoughts;
  if (cached > 0) metadata.cachedContentTokenCount = cached;
  return metadata;
}

function count(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0;
}

export function modelOf(completion: JsonObject, model: string): string {
  return typeof completion['model'] === 'string' && completion['model'] !== '' ? completion['model'] : model;
}

export function idOf(completion: JsonObject, requestId: string): string {
  return typeof completion['id'] === 'string' && completion['id'] !== '' ? completion['id'] : requestId;
}
