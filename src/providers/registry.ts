import type { ProviderSettings } from './provider-settings.ts';
import { createAnthropicAdapter } from './anthropic/adapter.ts';
import { createAzureAdapter } from './azure/adapter.ts';
import { createBedrockAdapter } from './bedrock/adapter.ts';
import { createGeminiAdapter } from './gemini/adapter.ts';
import { createOpenAICompatibleAdapter } from './openai-compatible/adapter.ts';
import type { ProviderAdapter, ProviderFactory } from './provider.ts';
import type { ProviderType } from './provider-types.ts';
import type { UpstreamClient } from './upstream-client.ts';
import { createVertexAdapter } from './vertex/adapter.ts';

const openAICompatible = createOpenAICompatibleAdapter;

/**
 * Explicit registration: each provider type names the factory that serves it. Native
 * adapters (anthropic, gemini) live in their own folders; the rest speak OpenAI's wire format.
 */
const factories: Readonly<Record<ProviderType, ProviderFactory>> = {
  openai: openAICompatible,
  anthropic: createAnthropicAdapter,
  gemini: createGeminiAdapter,
  groq: openAICompatible,
  openrouter: openAICompatible,
  deepseek: openAICompatible,
  xai: openAICompatible,
  mistral: openAICompatible,
  together: openAICompatible,
  fireworks: openAICompatible,
  azure: createAzureAdapter,
  vertex: (settings, client) => createVertexAdapter(settings, client),
  bedrock: createBedrockAdapter,
  ollama: openAICompatible,
  vllm: openAICompatible,
  'openai-compatible': openAICompatible,
};

export function createAdapters(providers: readonly ProviderSettings[], client: UpstreamClient): ProviderAdapter[] {
  return providers.map((settings) => {
    const adapter = factories[settings.type](settings, client);
    const flags = {
      ...(settings.options.forwardAccountHeaders === true ? { forwardAccountHeaders: true } : {}),
      ...(settings.options.resourcesDefault === true ? { resourcesDefault: true } : {}),
    };
    return Object.keys(flags).length === 0 ? adapter : { ...adapter, ...flags };
  });
}
