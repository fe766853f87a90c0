import { invalidRequest, type GatewayError } from '../../errors/gateway-error.ts';

/**
 * The parts of Google's Gemini API wire format (generativelanguage `v1beta`) the gateway
 * produces. Requests are read as `unknown` and checked field by field (convert-request.ts);
 * these types describe what goes back to the client.
 */

export type JsonObject = Record<string, unknown>;

export interface Part {
  text?: string;
  thought?: boolean;
  functionCall?: { id?: string; name: string; args: unknown };
}

export interface Candidate {
  content: { role: 'model'; parts: Part[] };
  finishReason?: FinishReason;
  index: number;
}

export interface UsageMetadata {
  promptTokenCount: number;
  candidatesTokenCount: number;
  totalTokenCount: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
}

export interface GenerateContentResponse {
  candidates: Candidate[];
  usageMetadata?: UsageMetadata;
  modelVersion: string;
  responseId: string;
}

export type FinishReason = 'STOP' | 'MAX_TOKENS' | 'SAFETY' | 'MALFORMED_FUNCTION_CALL' | 'OTHER';

export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !Buffer.isBuffer(value);
}

/**
 * A field by its proto JSON name: Google's REST API accepts both `lowerCamelCase` (what the
 * SDKs send) and the proto's `snake_case` (`inlineData` and `inline_data`).
 */
export function field(object: JsonObject, name: string): unknown {
  const value = object[name];
  if (value !== undefined) return value;
  return object[name.replace(/[A-Z]/g, (letter) => `_${letter.toLowerCase()}`)];
}

export function invalid(message: string, param?: string): GatewayError {
  return invalidRequest(message, { code: 'invalid_body', ...(param === undefined ? {} : { param }) });
}
