/**
 * The parts of Anthropic's Messages wire format the gateway produces. Requests are read as
 * `unknown` and checked field by field (convert-request.ts); these types describe what goes
 * back to the client.
 */

export type JsonObject = Record<string, unknown>;

export interface TextBlock {
  type: 'text';
  text: string;
}

export interface ThinkingBlock {
  type: 'thinking';
  thinking: string;
  signature: string;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: unknown;
}

export type ContentBlock = TextBlock | ThinkingBlock | ToolUseBlock;

export type StopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal';

export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens: number;
  cache_creation_input_tokens: number;
}

export interface MessagesResponse {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ContentBlock[];
  stop_reason: StopReason | null;
  stop_sequence: string | null;
  usage: MessagesUsage;
}

/** Anthropic message ids start with `msg_`; an upstream id is kept inside one. */
export function messageIdFor(upstreamId: unknown, fallback: string): string {
  const id = typeof upstreamId === 'string' && upstreamId !== '' ? upstreamId : fallback;
  return id.startsWith('msg_') ? id : `msg_${id}`;
}

export { isJsonObject as isObject } from '../../core/json.ts';
