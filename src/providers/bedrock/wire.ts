// The shapes of Bedrock's Converse API (bedrock-runtime `POST /model/{modelId}/converse` and
// `/converse-stream`) that the converters read and write. Only the fields the gateway uses
// are named; the rest pass as unknown.

export type JsonObject = Record<string, unknown>;

export { isJsonObject as isRecord } from '../../core/json.ts';

/** One block of a Converse message: exactly one of its keys is set. */
export interface ContentBlock {
  text?: string;
  image?: { format: string; source: { bytes: string } };
  document?: { format: string; name: string; source: { bytes: string } };
  toolUse?: { toolUseId: string; name: string; input: unknown };
  toolResult?: { toolUseId: string; content: ContentBlock[]; status?: 'success' | 'error' };
  reasoningContent?: { reasoningText?: { text?: string; signature?: string }; redactedContent?: string };
  cachePoint?: { type: 'default' };
  json?: unknown;
}

export interface ConverseMessage {
  role: 'user' | 'assistant';
  content: ContentBlock[];
}

export interface ConverseRequest {
  messages: ConverseMessage[];
  system?: ContentBlock[];
  inferenceConfig?: { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] };
  toolConfig?: { tools: JsonObject[]; toolChoice?: JsonObject };
  [native: string]: unknown;
}

/** Converse usage: `inputTokens` excludes the tokens read from or written to the prompt cache. */
export interface ConverseUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
}

export interface ConverseResponse {
  output: { message: ConverseMessage };
  stopReason: string;
  usage: ConverseUsage;
  [other: string]: unknown;
}
