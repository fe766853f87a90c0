import { finishReasonOf, functionCallPart, idOf, modelOf, toUsageMetadata } from './convert-response.ts';
import { isObject, type Candidate, type GenerateContentResponse, type JsonObject, type Part } from './wire.ts';

export interface GeminiStreamOptions {
  /** The model named when the upstream's chunks name none. */
  model: string;
  /** The response id when the upstream sends no chunk id (the gateway's request id). */
  fallbackId: string;
}

interface ToolCall {
  id: string | null;
  name: string;
  arguments: string;
}

interface ChoiceState {
  finishReason: unknown;
  /** Tool calls by OpenAI index, arguments gathered from their fragments. */
  calls: Map<number, ToolCall>;
}

/**
 * OpenAI chat chunks in, Gemini `GenerateContentResponse` chunks out (what
 * `streamGenerateContent` streams): text and thought deltas as they come, each in one chunk;
 * function calls whole (Gemini never splits their arguments), with the finish reason and
 * `usageMetadata` in the last chunk, sent once the upstream has finished (its usage chunk
 * comes after the finish reason). Pure and incremental; the relay frames what it returns.
 */
export class GeminiStreamTranslator {
  private readonly options: GeminiStreamOptions;
  private model: string | null = null;
  private id: string | null = null;
  private usage: unknown = null;
  private readonly choices = new Map<number, ChoiceState>();

  constructor(options: GeminiStreamOptions) {
    this.options = options;
  }

  /** The chunk for one parsed upstream chunk, or null when it carries nothing to show yet. */
  push(chunk: JsonObject): GenerateContentResponse | null {
    this.model ??= modelOf(chunk, this.options.model);
    this.id ??= idOf(chunk, this.options.fallbackId);
    if (isObject(chunk['usage'])) this.usage = chunk['usage'];
    const choices = Array.isArray(chunk['choices']) ? (chunk['choices'] as unknown[]) : [];
    const candidates: Candidate[] = [];
    for (const choice of choices) {
      if (!isObject(choice)) continue;
      const index = typeof choice['index'] === 'number' ? choice['index'] : 0;
      const parts = this.partsOf(index, choice);
      if (parts.length > 0) candidates.push({ content: { role: 'model', parts }, index });
    }
    return candidates.length === 0 ? null : this.response(candidates);
  }

  /** The last chunk: gathered function calls, finish reasons and usage. */
  finish(): GenerateContentResponse {
    if (this.choices.size === 0) this.choices.set(0, { finishReason: null, calls: new Map() });
    const candidates = [...this.choices].map(([index, state]): Candidate => {
      const parts = [...state.calls.values()].map((call) => functionCallPart(call.id, call));
      return { content: { role: 'model', parts }, finishReason: finishReasonOf(state.finishReason), index };
    });
    const response = this.response(candidates);
    const usage = toUsageMetadata(this.usage);
    if (usage !== null) response.usageMetadata = usage;
    return response;
  }

  private partsOf(index: number, choice: JsonObject): Part[] {
    let state = this.choices.get(index);
    if (state === undefined) {
      state = { finishReason: null, calls: new Map() };
      this.choices.set(index, state);
    }
    const delta = isObject(choice['delta']) ? choice['delta'] : {};
    const parts: Part[] = [];
    const reasoning = delta['reasoning_content'] ?? delta['reasoning'];
    if (typeof reasoning === 'string' && reasoning !== '') parts.push({ text: reasoning, thought: true });
    const text = typeof delta['content'] === 'string' && delta['content'] !== '' ? delta['content'] : delta['refusal'];
    if (typeof text === 'string' && text !== '') parts.push({ text });
    if (Array.isArray(delta['tool_calls'])) for (const call of delta['tool_calls'] as unknown[]) gather(state.calls, call);
    if (typeof choice['finish_reason'] === 'string') state.finishReason = choice['finish_reason'];
    return parts;
  }

  private response(candidates: Candidate[]): GenerateContentResponse {
    return { candidates, modelVersion: this.model ?? this.options.model, responseId: this.id ?? this.options.fallbackId };
  }
}

/** One tool-call fragment added to its call (a new index, or a new id without one, opens one). */
function gather(calls: Map<number, ToolCall>, fragment: unknown): void {
  if (!isObject(fragment)) return;
  const id = typeof fragment['id'] === 'string' && fragment['id'] !== '' ? fragment['id'] : null;
  let key = typeof fragment['index'] === 'number' ? fragment['index'] : calls.size - 1;
  const last = calls.get(key);
  if (last === undefined || (id !== null && last.id !== null && last.id !== id)) {
    key = typeof fragment['index'] === 'number' ? key : calls.size;
    calls.set(key, { id, name: '', arguments: '' });
  }
  const call = calls.get(key);
  const fn = isObject(fragment['function']) ? fragment['function'] : {};
  if (call === undefined) return;
  if (call.id === null && id !== null) call.id = id;
  if (typeof fn['name'] === 'string' && fn['name'] !== '') call.name = fn['name'];
  if (typeof fn['arguments'] === 'string') call.arguments += fn['arguments'];
}
