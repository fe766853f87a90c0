/** Who is calling: what authentication found for a request (ADR 30). */
export interface Principal {
  /** `open`: no credentials are configured; `master`: the master key; `api_key`: a managed key; `jwt`: a trusted issuer's token. */
  readonly kind: 'open' | 'master' | 'api_key' | 'jwt';
  readonly keyId: string | null;
  /** The user path a managed key is bound to (or a JWT's claim template gives); it always wins over the header. */
  readonly boundUserPath: string | null;
  /** What the caller may ask for: concrete selectors, virtual model names, `<instance>/*`; absent or null: anything. */
  readonly allowedModels?: readonly string[] | null;
  /** Model endpoints, `/mcp` and MCP server names the caller may call; absent or null: all of them. */
  readonly allowedEndpoints?: readonly string[] | null;
  /** `user`: model endpoints and `/mcp`; `viewer`: also GET on `/admin`; `admin`: everything. Absent: by kind. */
  readonly role?: 'user' | 'viewer' | 'admin';
  /** A JWT's subject (`sub`), recorded where a key id would be. */
  readonly subject?: string | null;
  /** A JWT's issuer (`iss`): a subject names one credential only together with its issuer. */
  readonly issuer?: string | null;
}

/** The seam for managed API keys: looks a presented token up. */
export interface ApiKeyAuthenticator {
  /** Whether any managed key exists (if none and no master key, the gateway is open). */
  hasKeys(): boolean;
  authenticate(token: string): Principal | null;
}
