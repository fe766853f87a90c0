import type { ModelEntry } from '../model-lookup.ts';

/** What every gateway model answers on this dialect (embeddings only where the upstream embeds). */
const methods = ['generateContent', 'streamGenerateContent', 'countTokens', 'embedContent', 'batchEmbedContents'];

/** A Gemini `Model` resource for a gateway model: `name` is `models/<selector>`, usable as the SDK's `model`. */
export interface GeminiModel {
  name: string;
  baseModelId: string;
  version: string;
  displayName: string;
  description: string;
  supportedGenerationMethods: string[];
}

export function toGeminiModel(entry: ModelEntry): GeminiModel {
  return {
    name: `models/${entry.id}`,
    baseModelId: entry.id,
    version: '001',
    displayName: entry.id,
    description: entry.owned_by === 'virtual' ? 'virtual model' : `served by ${entry.owned_by}`,
    supportedGenerationMethods: methods,
  };
}
