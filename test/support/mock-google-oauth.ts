import { createVerify, generateKeyPairSync } from 'node:crypto';

// The OAuth side of a mock Google: service accounts made in the test (a fresh RSA key each),
// and the token endpoint's check of a JWT-bearer assertion (RS256 signature against the
// account's public key, issuer, audience, scope, expiry) as Google's `/token` makes it.

export const GOOGLE_TOKEN_AUDIENCE = 'https://oauth2.googleapis.com/token';
export const JWT_BEARER_GRANT = 'urn:ietf:params:oauth:grant-type:jwt-bearer';

export interface ServiceAccount {
  /** The service-account JSON as Google issues it (`token_uri` pointing at the mock). */
  json: Record<string, string>;
  publicKey: string;
}

export function createServiceAccount(project: string, tokenUri: string, name = 'gateway'): ServiceAccount {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const email = `${name}@${project}.iam.gserviceaccount.com`;
  return {
    publicKey,
    json: {
      type: 'service_account',
      project_id: project,
      private_key_id: `key-${name}`,
      private_key: privateKey,
      client_email: email,
      client_id: '100000000000000000001',
      auth_uri: 'https://accounts.google.com/o/oauth2/auth',
      token_uri: tokenUri,
      auth_provider_x509_cert_url: 'https://www.googleapis.com/oauth2/v1/certs',
      client_x509_cert_url: `https://www.googleapis.com/robot/v1/metadata/x509/${encodeURIComponent(email)}`,
      universe_domain: 'googleapis.com',
    },
  };
}

/** Why Google would refuse this assertion (`invalid_grant` description), or null when it is good. */
export function assertionProblem(assertion: string, accounts: readonly ServiceAccount[], scope: string): string | null {
  const [header, payload, signature] = assertion.split('.');
  if (header === undefined || payload === undefined || signature === undefined) return 'Invalid JWT: malformed assertion';
  const claims = decode(payload);
  const head = decode(header);
  if (claims === null || head === null || head['alg'] !== 'RS256') return 'Invalid JWT: not RS256';
  const account = accounts.find((candidate) => candidate.json['client_email'] === claims['iss']);
  if (account === undefined) return 'Invalid JWT: unknown issuer';
  const verifier = createVerify('RSA-SHA256').update(`${header}.${payload}`);
  if (!verifier.verify(account.publicKey, Buffer.from(signature, 'base64url'))) return 'Invalid JWT Signature.';
  if (claims['aud'] !== GOOGLE_TOKEN_AUDIENCE) return 'Invalid JWT: audience';
  const now = Date.now() / 1000;
  if (typeof claims['exp'] !== 'number' || claims['exp'] < now)
    return 'Invalid JWT: Token must be a short-lived token and in a reasonable timeframe';
  if (typeof claims['scope'] !== 'string' || !claims['scope'].split(' ').includes(scope)) return 'Invalid JWT: missing scope';
  return null;
}

function decode(part: string): Record<string, unknown> | null {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(part, 'base64url').toString('utf8'));
    return typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
