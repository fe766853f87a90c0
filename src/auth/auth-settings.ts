import { z } from 'zod';

/**
 * YAML `auth.jwt.issuers[]`: identity providers whose JWT bearer tokens the gateway trusts
 * (README "Authentication"). Only asymmetric algorithms are accepted: a shared-secret (HS*)
 * algorithm would let anyone holding the public key forge tokens, and `none` is never valid.
 */
export const asymmetricAlgorithms = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;

const stringList = z.union([z.array(z.string().trim().min(1)), z.string().transform((list) => list.split(',').map((item) => item.trim()))]);

const jwkSchema = z.looseObject({ kty: z.string() });

const issuerSchema = z
  .object({
    issuer: z.string().trim().min(1, { error: 'expected the issuer (the tokens\u2019 `iss`)' }),
    jwks_url: z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' }).optional(),
    keys: z.union([z.object({ keys: z.array(jwkSchema).min(1) }), z.array(jwkSchema).min(1)]).optional(),
    audiences: stringList.pipe(z.array(z.string().min(1)).min(1, { error: 'expected at least one audience' })),
    algorithms: z
      .array(z.enum(asymmetricAlgorithms, { error: `expected algorithms among ${asymmetricAlgorithms.join(', ')} (never none nor HS*)` }))
      .min(1)
      .default(['RS256', 'ES256']),
    clock_skew_seconds: z.coerce.number().int().min(0).max(600).default(60),
    user_path: z
      .string()
      .trim()
      .min(1)
      .refine((template) => !/[{}]/.test(template.replace(/\{claims\.[A-Za-z0-9_.-]+\}/g, '')), {
        error: 'expected a user path with {claims.NAME} placeholders, e.g. /orgs/{claims.org}/users/{claims.sub}',
      })
      .optional(),
    allowed_models_claim: z.string().trim().min(1).optional(),
    allowed_endpoints_claim: z.string().trim().min(1).optional(),
  })
  .refine((issuer) => (issuer.jwks_url === undefined) !== (issuer.keys === undefined), {
    error: 'expected exactly one of jwks_url or keys (an inline JWKS)',
  });

export const authSchema = z
  .object({
    jwt: z
      .object({
        issuers: z.array(issuerSchema).default([]),
        /** Bound on tokens whose verdict is kept until their `exp`. */
        cache_max_entries: z.coerce.number().int().min(1).max(1_000_000).default(10_000),
        /** An unknown `kid` refetches the JWKS at most once per this interval. */
        jwks_cooldown_seconds: z.coerce.number().int().min(1).max(3600).default(30),
        /** Keys older than this are refetched (on failure the cached keys keep working). */
        jwks_max_age_seconds: z.coerce
          .number()
          .int()
          .min(10)
          .max(7 * 86400)
          .default(600),
      })
      .prefault({}),
  })
  .prefault({});

export interface JwtIssuerSettings {
  readonly issuer: string;
  readonly jwksUrl: string | null;
  readonly keys: readonly Record<string, unknown>[] | null;
  readonly audiences: readonly string[];
  readonly algorithms: readonly string[];
  readonly clockSkewSeconds: number;
  /** Template such as `/orgs/{claims.org}/users/{claims.sub}`; null: the user-path header applies. */
  readonly userPath: string | null;
  readonly allowedModelsClaim: string | null;
  /** Optional claim naming the endpoints, `/mcp` and MCP servers the caller may call. */
  readonly allowedEndpointsClaim: string | null;
}

export interface JwtSettings {
  readonly issuers: readonly JwtIssuerSettings[];
  readonly cacheMaxEntries: number;
  readonly jwksCooldownMs: number;
  readonly jwksMaxAgeMs: number;
}

export function buildAuthSettings(document: z.output<typeof authSchema>): { readonly jwt: JwtSettings } {
  const jwt = document.jwt;
  return {
    jwt: {
      issuers: jwt.issuers.map((issuer) => ({
        issuer: issuer.issuer,
        jwksUrl: issuer.jwks_url ?? null,
        keys: issuer.keys === undefined ? null : Array.isArray(issuer.keys) ? issuer.keys : issuer.keys.keys,
        audiences: issuer.audiences,
        algorithms: issuer.algorithms,
        clockSkewSeconds: issuer.clock_skew_seconds,
        userPath: issuer.user_path ?? null,
        allowedModelsClaim: issuer.allowed_models_claim ?? null,
        allowedEndpointsClaim: issuer.allowed_endpoints_claim ?? null,
      })),
      cacheMaxEntries: jwt.cache_max_entries,
      jwksCooldownMs: jwt.jwks_cooldown_seconds * 1000,
      jwksMaxAgeMs: jwt.jwks_max_age_seconds * 1000,
    },
  };
}
