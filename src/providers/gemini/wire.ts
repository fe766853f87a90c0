/**
 * The parts of Gemini's `generateContent` wire format (generativelanguage v1beta, also
 * Vertex AI's) the converters write and read. Only what the translation touches is typed;
 * everything else stays `unknown` and is passed along or ignored.
 */

export type Json = Record<string, unknown>;

export interface GeminiPart {
  text?: string;
  /** A thought summary (`includeThoughts`), not answer text. */
  thought?: boolean;
  /** Opaque signature of the model's reasoning, to be sent back with the part it came on. */
  thoughtSignature?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { mimeType?: string; fileUri: string };
  functionCall?: { id?: string; name: string; args?: Json };
  functionResponse?: { name: string; response: Json };
}

export interface GeminiContent {
  role: 'user' | 'model';
  parts: GeminiPart[];
}

export interface GenerateContentRequest {
  contents: GeminiContent[];
  systemInstruction?: { parts: GeminiPart[] };
  tools?: Json[];
  toolConfig?: Json;
  generationConfig?: Json;
  safetySettings?: unknown[];
  cachedContent?: string;
}

export { isJsonObject as isRecord } from '../../core/json.ts';

export const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
