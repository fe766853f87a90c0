import type { UpstreamModel } from '../provider.ts';
import { parseJsonObject } from '../../core/json.ts';

/** One page of Gemini's native `GET /v1beta/models` listing. */
export interface GeminiModelPage {
  models: UpstreamModel[];
  /** The token of the next page, null on the last one. */
  nextPageToken: string | null;
}

/**
 * Generation methods the gateway can serve through Gemini's OpenAI-compatible endpoint:
 * chat (`generateContent`) and embeddings (`embedContent`). Other models (tuning-only, AQA,
 * image or video generators) are left out of the listing.
 */
const servedMethods = new Set(['generateContent', 'embedContent']);

/**
 * Reads `{"models":[{"name":"models/gemini-2.0-flash","supportedGenerationMethods":[...]}],
 * "nextPageToken"}`; ids lose the `models/` prefix, because the OpenAI-compatible endpoint
 * takes bare ids. Null when the shape is wrong.
 */
export function parseGeminiModelPage(text: string): GeminiModelPage | null {
  const parsed = parseJsonObject(text);
  if (parsed === null) return null;
  const { models: entries, nextPageToken } = parsed;
  // An empty listing may come without `models` at all.
  if (entries !== undefined && !Array.isArray(entries)) return null;
  const models: UpstreamModel[] = [];
  for (const entry of entries ?? []) {
    const id = servedModelId(entry);
    if (id !== null) models.push({ id });
  }
  return { models, nextPageToken: typeof nextPageToken === 'string' && nextPageToken !== '' ? nextPageToken : null };
}

function servedModelId(entry: unknown): string | null {
  if (typeof entry !== 'object' || entry === null) return null;
  const { name, supportedGenerationMethods: methods } = entry as { name?: unknown; supportedGenerationMethods?: unknown };
  if (typeof name !== 'string') return null;
  const id = name.startsWith('models/') ? name.slice('models/'.length) : name;
  if (id === '') return null;
  // A listing without methods says nothing against the model: keep it.
  if (Array.isArray(methods) && !methods.some((method) => typeof method === 'string' && servedMethods.has(method))) return null;
  return id;
}
