import type { AuthClient, GoogleAuth } from 'google-auth-library';
import { GatewayError, providerError } from '../../errors/gateway-error.ts';
import { readErrorDetails } from '../upstream-errors.ts';

/** The OAuth scope Vertex AI calls need. */
export const CLOUD_PLATFORM_SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

/** Google's token endpoint, which google-auth-library posts service-account assertions to. */
const GOOGLE_TOKEN_URL = 'https://oauth2.googleapis.com/token';

/** Access tokens for one Vertex instance: cached, and refreshed before they expire. */
export interface VertexTokenSource {
  /** A valid access token (fetched or refreshed when the cached one is near its expiry). */
  token(): Promise<string>;
  /** The project of the credentials (a service account's `project_id`, or ADC's), null when unknown. */
  projectId(): Promise<string | null>;
  /** Marks `rejected` (a token Vertex refused: revoked, or expired early) as expired, so the next `token()` fetches anew. */
  invalidate(rejected: string): Promise<void>;
}

export interface TokenSourceOptions {
  /** The instance name, used in errors. */
  provider: string;
  /** A service-account (or other Google credentials) JSON; absent: application default credentials. */
  credentialsJson?: string;
}

/**
 * google-auth-library holds the credentials: it signs the service account's JWT assertion,
 * exchanges it for an access token, caches it and refreshes it ahead of its expiry (five
 * minutes by default). Without credentials it finds the application default ones
 * (GOOGLE_APPLICATION_CREDENTIALS, gcloud's, the metadata server).
 */
export function createTokenSource(options: TokenSourceOptions): VertexTokenSource {
  const credentials = parseCredentials(options.credentialsJson, options.provider);
  // google-auth-library (and gaxios under it) is loaded on the first token, not at start-up.
  let auth: Promise<GoogleAuth> | null = null;
  const authOf = (): Promise<GoogleAuth> => (auth ??= createGoogleAuth(credentials));
  let client: Promise<AuthClient> | null = null;
  const clientOf = (): Promise<AuthClient> => {
    client ??= authOf()
      .then((created) => created.getClient())
      .then((created) => honourTokenUri(created, credentials));
    client.catch(() => (client = null));
    return client;
  };
  return {
    async token(): Promise<string> {
      try {
        const { token } = await (await clientOf()).getAccessToken();
        if (typeof token === 'string' && token !== '') return token;
      } catch (error) {
        throw tokenError(error, options.provider);
      }
      throw new GatewayError('authentication_error', `vertex instance ${options.provider} got no access token`, {
        provider: options.provider,
        code: 'upstream_error',
      });
    },
    async invalidate(rejected: string): Promise<void> {
      const current = await clientOf().catch(() => null);
      if (current === null || current.credentials.access_token !== rejected) return;
      current.credentials = { ...current.credentials, expiry_date: 1 };
    },
    async projectId(): Promise<string | null> {
      const fromJson = credentials?.['project_id'];
      if (typeof fromJson === 'string' && fromJson !== '') return fromJson;
      return authOf()
        .then((created) => created.getProjectId())
        .catch(() => null);
    },
  };
}

type CredentialsJson = Record<string, unknown>;

async function createGoogleAuth(credentials: CredentialsJson | null): Promise<GoogleAuth> {
  const { GoogleAuth: Auth } = await import('../../lazy/google-auth.ts');
  return credentials === null ? new Auth({ scopes: [CLOUD_PLATFORM_SCOPE] }) : new Auth({ credentials, scopes: [CLOUD_PLATFORM_SCOPE] });
}

function parseCredentials(text: string | undefined, provider: string): CredentialsJson | null {
  if (text === undefined) return null;
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) return parsed as CredentialsJson;
  } catch {
    // reported below
  }
  throw new Error(`vertex instance ${provider}: the credentials are not a JSON object`);
}

/**
 * A service account's JSON names its token endpoint (`token_uri`); google-auth-library posts
 * to Google's fixed one. Requests to that URL are sent to `token_uri` instead (a private
 * endpoint, or a mock in tests); the assertion's audience stays Google's.
 */
function honourTokenUri(client: AuthClient, credentials: CredentialsJson | null): AuthClient {
  const tokenUri = credentials?.['token_uri'];
  if (typeof tokenUri !== 'string' || tokenUri === '' || tokenUri === GOOGLE_TOKEN_URL) return client;
  const target = new URL(tokenUri);
  client.transporter.interceptors.request.add({
    resolved: (config) => {
      if (config.url.href === GOOGLE_TOKEN_URL) config.url = target;
      return Promise.resolve(config);
    },
  });
  return client;
}

interface ResponseLike {
  status?: unknown;
  data?: unknown;
}

/**
 * A failed token request in the envelope: rejected credentials (the endpoint's 4xx) are an
 * authentication_error carrying Google's message, a 5xx is the provider's, no answer is
 * `upstream_unreachable`.
 */
function tokenError(error: unknown, provider: string): GatewayError {
  if (error instanceof GatewayError) return error;
  const response = (error as { response?: ResponseLike } | null)?.response;
  const status = typeof response?.status === 'number' ? response.status : 0;
  const text = typeof response?.data === 'string' ? response.data : JSON.stringify(response?.data ?? '');
  const detail = status > 0 ? oauthMessage(text) : error instanceof Error ? error.message : String(error);
  const message = `vertex instance ${provider} could not get an access token: ${detail}`;
  if (status >= 400 && status < 500) return new GatewayError('authentication_error', message, { provider, code: 'upstream_error' });
  if (status >= 500) return providerError(message, { provider, code: 'upstream_error', cause: error });
  return providerError(message, { provider, code: 'upstream_unreachable', cause: error });
}

/** OAuth's `{error, error_description}`, else the usual error shapes. */
function oauthMessage(text: string): string {
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    if (typeof parsed['error'] === 'string') {
      const description = parsed['error_description'];
      return typeof description === 'string' ? `${parsed['error']}: ${description}` : parsed['error'];
    }
  } catch {
    // not JSON
  }
  return readErrorDetails(text).message;
}
