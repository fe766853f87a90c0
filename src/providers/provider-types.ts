/**
 * What the gateway knows about each provider type: its default base URL and what an
 * instance needs to be usable. Pure data; the adapters that serve each type are registered in
 * registry.ts.
 */
export interface ProviderTypeProfile {
  /** Base URL used when an instance gives none; null when `base_url` is required. */
  defaultBaseUrl: string | null;
  /** Whether an instance needs an API key (local servers do not). */
  requiresApiKey: boolean;
  /** How the credential is sent upstream: `Authorization: Bearer`, Azure's `api-key`, Anthropic's `x-api-key`. */
  authHeader: 'bearer' | 'api-key' | 'x-api-key';
  /** Serves OpenAI's Responses API at `{base_url}/responses` (else /v1/responses is translated through chat). */
  responsesApi?: boolean;
  /** False for types that do not speak OpenAI's wire format beyond chat (legacy completions, moderations, images). */
  openaiRelays?: boolean;
  /** The adapter builds its endpoint from other settings (Bedrock's region, Vertex's location) when `base_url` is absent. */
  derivesBaseUrl?: boolean;
}

const cloud = (defaultBaseUrl: string): ProviderTypeProfile => ({
  defaultBaseUrl,
  requiresApiKey: true,
  authHeader: 'bearer',
});

export const providerTypes = {
  openai: { ...cloud('https://api.openai.com/v1'), responsesApi: true },
  // Native Messages API (src/providers/anthropic/).
  anthropic: { defaultBaseUrl: 'https://api.anthropic.com/v1', requiresApiKey: true, authHeader: 'x-api-key', openaiRelays: false },
  // Native API by default; `api: openai` uses `{base}/openai` (src/providers/gemini/adapter.ts).
  gemini: cloud('https://generativelanguage.googleapis.com/v1beta'),
  groq: cloud('https://api.groq.com/openai/v1'),
  openrouter: cloud('https://openrouter.ai/api/v1'),
  deepseek: cloud('https://api.deepseek.com/v1'),
  xai: cloud('https://api.x.ai/v1'),
  mistral: cloud('https://api.mistral.ai/v1'),
  together: cloud('https://api.together.xyz/v1'),
  fireworks: cloud('https://api.fireworks.ai/inference/v1'),
  // Azure OpenAI (src/providers/azure/): deployment URLs and api-version, or the v1 API.
  azure: { defaultBaseUrl: null, requiresApiKey: true, authHeader: 'api-key', responsesApi: true },
  // Google Vertex AI (src/providers/vertex/): OAuth tokens of a service account, endpoint from location.
  vertex: { defaultBaseUrl: null, requiresApiKey: false, authHeader: 'bearer', openaiRelays: false, derivesBaseUrl: true },
  // Converse API, SigV4 or a Bedrock API key; endpoint from `region` (src/providers/bedrock/).
  bedrock: { defaultBaseUrl: null, requiresApiKey: false, authHeader: 'bearer', openaiRelays: false, derivesBaseUrl: true },
  ollama: { defaultBaseUrl: 'http://127.0.0.1:11434/v1', requiresApiKey: false, authHeader: 'bearer' },
  vllm: { defaultBaseUrl: 'http://127.0.0.1:8000/v1', requiresApiKey: false, authHeader: 'bearer' },
  'openai-compatible': { defaultBaseUrl: null, requiresApiKey: false, authHeader: 'bearer' },
} as const satisfies Record<string, ProviderTypeProfile>;

export type ProviderType = keyof typeof providerTypes;

export const providerTypeNames = Object.keys(providerTypes) as ProviderType[];

export function isProviderType(value: string): value is ProviderType {
  return Object.hasOwn(providerTypes, value);
}

/** Whether instances of `type` answer `POST /responses` natively. */
export function servesResponsesApi(type: string): boolean {
  if (!isProviderType(type)) return false;
  const profile: ProviderTypeProfile = providerTypes[type];
  return profile.responsesApi === true;
}

/** Whether instances of `type` take OpenAI's other endpoints (`/completions`, `/moderations`, `/images/...`) as they are. */
export function servesOpenAiRelays(type: string): boolean {
  if (!isProviderType(type)) return true;
  const profile: ProviderTypeProfile = providerTypes[type];
  return profile.openaiRelays !== false;
}

/**
 * Types whose instances serve OpenAI's Files and Batch APIs (`/files`, `/batches`): the
 * default instance for those endpoints is the first configured one of these types.
 */
export const filesAndBatchesTypes: ReadonlySet<string> = new Set<ProviderType>([
  'openai',
  'azure',
  'groq',
  'together',
  'openai-compatible',
]);
