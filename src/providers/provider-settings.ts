import type { ProviderType } from './provider-types.ts';

export interface ProviderSettings {
  /** Instance name, used in selectors (`<name>/<model>`) and in responses. */
  readonly name: string;
  readonly type: ProviderType;
  readonly apiKey: string | null;
  /** Base URL without a trailing slash, e.g. `https://api.openai.com/v1`. */
  readonly baseUrl: string;
  /** Configured model ids; null means "ask the upstream's GET /models". */
  readonly models: readonly string[] | null;
  /** Type-specific settings; each adapter reads the ones of its type. */
  readonly options: ProviderOptions;
}

/** Settings only some provider types read (YAML names in README "Providers"). */
export interface ProviderOptions {
  /** Azure `api-version` query parameter. */
  readonly apiVersion?: string;
  /** Azure: model id -> deployment name. */
  readonly deployments?: Readonly<Record<string, string>>;
  /** Bedrock: AWS region. */
  readonly region?: string;
  readonly awsAccessKeyId?: string;
  readonly awsSecretAccessKey?: string;
  readonly awsSessionToken?: string;
  /** Vertex: Google Cloud project and location. */
  readonly project?: string;
  readonly location?: string;
  /** Vertex: path to a service-account JSON file, or the JSON inline. */
  readonly credentials?: string;
  readonly credentialsJson?: string;
  /** Gemini: `native` (generativelanguage API, default) or `openai` (Google's OpenAI-compatible route). */
  readonly api?: 'native' | 'openai';
  /** YAML `forward_account_headers`: passthrough keeps the client's account-selecting headers (relay-headers.ts). */
  readonly forwardAccountHeaders?: boolean;
  /** YAML `resources_default`: receives /v1 resource calls without a `provider` hint (gateway/relay/resources.ts). */
  readonly resourcesDefault?: boolean;
}
