import type { ResponsesUsage } from './usage.ts';

/** What a translated Response object is built from besides its output. */
export interface ResponseSeed {
  /** Random hex shared by the ids of the response and its items. */
  idBase: string;
  /** Unix seconds. */
  createdAt: number;
  /** The model that executes the request (the target's bare id). */
  model: string;
  /** The instance name stamped as `provider`. */
  provider: string;
  /** The client's Responses request, echoed the way OpenAI echoes it. */
  request: Record<string, unknown>;
  /** Whether the gateway keeps the response (src/responses/); false when absent. */
  store?: boolean;
  /** The stored response this one continues, if any. */
  previousResponseId?: string | null;
}

export type ResponseStatus = 'in_progress' | 'completed' | 'incomplete' | 'failed';

export interface ResponseEnding {
  status: ResponseStatus;
  /** Why an incomplete response stopped (`max_output_tokens`, `content_filter`). */
  incompleteReason?: string;
  /** The model the upstream reported, when it did. */
  model?: string;
  output: unknown[];
  usage: ResponsesUsage | null;
}

export const responseIdOf = (seed: ResponseSeed): string => `resp_${seed.idBase}`;
export const messageIdOf = (seed: ResponseSeed, index: number): string => `msg_${seed.idBase}${index === 0 ? '' : `_${index}`}`;
export const functionCallIdOf = (seed: ResponseSeed, index: number): string => `fc_${seed.idBase}_${index}`;

/**
 * A Response object (`object: "response"`) in OpenAI's field order, echoing the request's
 * settings. `store` says whether the gateway keeps it (the request's `store` is not false;
 * see src/responses/response-state.ts), `previous_response_id` the response it continues.
 */
export function responseObject(seed: ResponseSeed, ending: ResponseEnding): Record<string, unknown> {
  const request = seed.request;
  const echo = (field: string, fallback: unknown): unknown => request[field] ?? fallback;
  const reasoning = request['reasoning'] as { effort?: unknown } | null | undefined;
  return {
    id: responseIdOf(seed),
    object: 'response',
    created_at: seed.createdAt,
    status: ending.status,
    background: false,
    error: null,
    incomplete_details: ending.incompleteReason === undefined ? null : { reason: ending.incompleteReason },
    instructions: echo('instructions', null),
    max_output_tokens: echo('max_output_tokens', null),
    model: ending.model ?? seed.model,
    output: ending.output,
    parallel_tool_calls: echo('parallel_tool_calls', true),
    previous_response_id: seed.previousResponseId ?? null,
    reasoning: { effort: reasoning?.effort ?? null, summary: null },
    store: seed.store ?? false,
    temperature: echo('temperature', null),
    text: echo('text', { format: { type: 'text' } }),
    tool_choice: echo('tool_choice', 'auto'),
    tools: echo('tools', []),
    top_p: echo('top_p', null),
    truncation: echo('truncation', 'disabled'),
    usage: ending.usage,
    user: echo('user', null),
    metadata: echo('metadata', {}),
    provider: seed.provider,
  };
}

/** How a chat `finish_reason` ends a response. */
export function endingOf(finishReason: unknown): Pick<ResponseEnding, 'status' | 'incompleteReason'> {
  if (finishReason === 'length') return { status: 'incomplete', incompleteReason: 'max_output_tokens' };
  if (finishReason === 'content_filter') return { status: 'incomplete', incompleteReason: 'content_filter' };
  return { status: 'completed' };
}
