/**
 * The parts of Anthropic's Messages API wire format the adapter writes and reads. Only what
 * the translation touches is typed; everything else stays `unknown` and is left alone.
 */

/** The API version every request names (`anthropic-version` header). */
export const ANTHROPIC_VERSION = '2023-06-01';

/** `max_tokens` is required by Anthropic; OpenAI clients usually leave it out. */
export const DEFAULT_MAX_TOKENS = 4096;

export type CacheControl = Record<string, unknown>;

export interface TextBlock {
  type: 'text';
  text: string;
  cache_control?: CacheControl;
}

export type ImageSource = { type: 'base64'; media_type: string; data: string } | { type: 'url'; url: string };

export interface ImageBlock {
  type: 'image';
  source: ImageSource;
  cache_control?: CacheControl;
}

export type DocumentSource =
  | { type: 'base64'; media_type: 'application/pdf'; data: string }
  | { type: 'text'; media_type: 'text/plain'; data: string }
  | { type: 'url'; url: string };

export interface DocumentBlock {
  type: 'document';
  source: DocumentSource;
  title?: string;
  cache_control?: CacheControl;
}

export interface ToolUseBlock {
  type: 'tool_use';
  id: string;
  name: string;
  input: Record<string, unknown>;
}

export interface ToolResultBlock {
  type: 'tool_result';
  tool_use_id: string;
  content: string | Array<TextBlock | ImageBlock>;
  cache_control?: CacheControl;
}

export type ContentBlock = TextBlock | ImageBlock | DocumentBlock | ToolUseBlock | ToolResultBlock;

export interface MessageParam {
  role: 'user' | 'assistant';
  /** A lone plain text block is sent as a string, as Anthropic's own examples do. */
  content: string | ContentBlock[];
}

export interface ToolDefinition {
  name: string;
  description?: string;
  input_schema: Record<string, unknown>;
  cache_control?: CacheControl;
}

export type ToolChoice =
  | { type: 'auto'; disable_parallel_tool_use?: boolean }
  | { type: 'any'; disable_parallel_tool_use?: boolean }
  | { type: 'tool'; name: string; disable_parallel_tool_use?: boolean }
  | { type: 'none' };

/** A Messages request; Anthropic-native extras a client sent are carried in the index signature. */
export interface MessagesRequest {
  model: string;
  max_tokens: number;
  messages: MessageParam[];
  system?: string | TextBlock[];
  temperature?: number;
  top_p?: number;
  stop_sequences?: string[];
  stream?: true;
  tools?: ToolDefinition[];
  tool_choice?: ToolChoice;
  metadata?: { user_id: string };
  thinking?: Record<string, unknown>;
  output_config?: Record<string, unknown>;
  [extra: string]: unknown;
}

/** Anthropic's usage object; newer fields may appear and are kept in `raw_usage`. */
export interface AnthropicUsage {
  input_tokens?: number | null;
  output_tokens?: number | null;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
  output_tokens_details?: { thinking_tokens?: number } | null;
  [extra: string]: unknown;
}

/** A response content block as read: text, tool_use and thinking matter, others are skipped. */
export interface ResponseBlock {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  thinking?: string;
}

export interface MessagesResponse {
  id: string;
  type: 'message';
  role: 'assistant';
  model: string;
  content: ResponseBlock[];
  stop_reason: string | null;
  stop_sequence: string | null;
  usage: AnthropicUsage;
}

export { isJsonObject as isRecord } from '../../core/json.ts';
