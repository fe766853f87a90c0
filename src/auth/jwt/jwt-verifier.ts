import { createLocalJWKSet, decodeJwt, errors, jwtVerify, type JSONWebKeySet, type JWTPayload } from 'jose';
import type { JwtIssuerSettings, JwtSettings } from '../auth-settings.ts';
import { InvalidUserPathError, normalizeUserPath } from '../../core/user-path.ts';
import { authenticationError, GatewayError } from '../../errors/gateway-error.ts';
import type { Principal } from '../principal.ts';
import { ClaimTemplate, MissingClaimError, modelsOfClaim } from './claim-template.ts';
import { JwksCache, type KeyResolver, type WarnLogger } from './jwks-cache.ts';
import { VerdictCache } from './verdict-cache.ts';

interface TrustedIssuer {
  readonly settings: JwtIssuerSettings;
  readonly keys: KeyResolver;
  readonly userPath: ClaimTemplate | null;
}

export { looksLikeJwt } from './jwt-shape.ts';

/**
 * Verifies JWT bearer tokens of the configured issuers (jose: signature, `exp`, `nbf`, `iss`,
 * `aud`, algorithm allowlist) once per token; the verdict is cached until the token's `exp`.
 */
export class JwtVerifier {
  private readonly issuers = new Map<string, TrustedIssuer>();
  private readonly verdicts: VerdictCache<Principal>;
  private readonly now: () => number;

  constructor(settings: JwtSettings, logger: WarnLogger, now: () => number = Date.now) {
    this.now = now;
    this.verdicts = new VerdictCache(settings.cacheMaxEntries, now);
    for (const issuer of settings.issuers) {
      const keys: KeyResolver =
        issuer.jwksUrl !== null
          ? new JwksCache({
              url: issuer.jwksUrl,
              issuer: issuer.issuer,
              cooldownMs: settings.jwksCooldownMs,
              maxAgeMs: settings.jwksMaxAgeMs,
              logger,
              now,
            }).resolve
          : createLocalJWKSet({ keys: issuer.keys ?? [] } as JSONWebKeySet);
      this.issuers.set(issuer.issuer, {
        settings: issuer,
        keys,
        userPath: issuer.userPath === null ? null : new ClaimTemplate(issuer.userPath),
      });
    }
  }

  get enabled(): boolean {
    return this.issuers.size > 0;
  }

  /** The cached verdict of a token verified before and not expired, else undefined. */
  cached(token: string): Principal | undefined {
    return this.verdicts.get(token);
  }

  async verify(token: string): Promise<Principal> {
    const issuer = this.issuerOf(token);
    const { settings } = issuer;
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, issuer.keys, {
        issuer: settings.issuer,
        audience: [...settings.audiences],
        algorithms: [...settings.algorithms],
        clockTolerance: settings.clockSkewSeconds,
        requiredClaims: ['exp'],
        currentDate: new Date(this.now()),
      }));
    } catch (error) {
      throw tokenError(error, settings);
    }
    const principal = principalOf(payload, issuer);
    this.verdicts.set(token, principal, ((payload.exp ?? 0) + settings.clockSkewSeconds) * 1000);
    return principal;
  }

  private issuerOf(token: string): TrustedIssuer {
    let iss: unknown;
    try {
      iss = decodeJwt(token).iss;
    } catch {
      throw invalidToken('the bearer token is not a well-formed JWT');
    }
    const issuer = typeof iss === 'string' ? this.issuers.get(iss) : undefined;
    if (issuer === undefined) {
      const shown = typeof iss === 'string' ? `"${iss.slice(0, 200)}"` : '(none)';
      throw invalidToken(`the token's issuer ${shown} is not a trusted issuer`);
    }
    return issuer;
  }
}

function principalOf(payload: JWTPayload, issuer: TrustedIssuer): Principal {
  const subject = typeof payload.sub === 'string' && payload.sub !== '' ? payload.sub : null;
  if (subject === null) throw invalidToken('the token has no "sub" claim');
  // Recorded as `jwt:<sub>` in usage and the request log: a bounded identity (README "Stored fields").
  if (subject.length > 256) throw invalidToken('the token\'s "sub" claim is longer than 256 characters');
  const { allowedModelsClaim, allowedEndpointsClaim } = issuer.settings;
  return Object.freeze({
    kind: 'jwt',
    keyId: null,
    subject,
    issuer: issuer.settings.issuer,
    boundUserPath: issuer.userPath === null ? null : boundPathOf(payload, issuer.userPath),
    allowedModels: allowedModelsClaim === null ? null : Object.freeze([...modelsOfClaim(payload, allowedModelsClaim)]),
    allowedEndpoints: allowedEndpointsClaim === null ? null : Object.freeze([...modelsOfClaim(payload, allowedEndpointsClaim)]),
  });
}

function boundPathOf(payload: JWTPayload, template: ClaimTemplate): string {
  try {
    return normalizeUserPath(template.fill(payload));
  } catch (error) {
    if (error instanceof MissingClaimError) throw invalidToken(error.message);
    if (error instanceof InvalidUserPathError) throw invalidToken(`the user path the token's claims give is invalid: ${error.message}`);
    throw error;
  }
}

function tokenError(error: unknown, settings: JwtIssuerSettings): GatewayError {
  if (error instanceof errors.JWTExpired) return expired();
  if (error instanceof errors.JWTClaimValidationFailed) return invalidToken(claimMessage(error, settings));
  if (error instanceof errors.JOSEAlgNotAllowed) {
    return invalidToken(`the token's algorithm is not allowed for issuer ${settings.issuer} (allowed: ${settings.algorithms.join(', ')})`);
  }
  if (error instanceof errors.JWSSignatureVerificationFailed) return invalidToken('the token signature is invalid');
  if (error instanceof errors.JWKSNoMatchingKey) return invalidToken(`no signing key of issuer ${settings.issuer} matches the token's kid`);
  if (error instanceof errors.JWKSMultipleMatchingKeys) return invalidToken('the token names no kid and the issuer has several keys');
  if (error instanceof GatewayError) return error;
  return invalidToken('the bearer token is not a valid JWT');
}

function claimMessage(error: InstanceType<typeof errors.JWTClaimValidationFailed>, settings: JwtIssuerSettings): string {
  switch (error.claim) {
    case 'aud':
      return `the token's audience is not accepted (expected one of: ${settings.audiences.join(', ')})`;
    case 'nbf':
      return 'the token is not valid yet (nbf is in the future)';
    case 'iat':
      return 'the token was issued in the future (iat)';
    case 'exp':
      return 'the token has no "exp" claim';
    default:
      return `the token's "${error.claim}" claim is invalid`;
  }
}

const challenge = (error: string) => ({ 'WWW-Authenticate': `Bearer error="${error}"` });

function invalidToken(message: string): GatewayError {
  return authenticationError(message, { code: 'invalid_token', headers: challenge('invalid_token') });
}

function expired(): GatewayError {
  return authenticationError('the token has expired', { code: 'token_expired', headers: challenge('invalid_token') });
}
