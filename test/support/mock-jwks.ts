import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';

/** A signing key of the test identity provider: its private key and public JWK (with `kid`, `alg`). */
export interface TestSigningKey {
  readonly kid: string;
  readonly alg: 'RS256' | 'ES256';
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
}

export async function signingKey(kid: string, alg: 'RS256' | 'ES256' = 'RS256'): Promise<TestSigningKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg, { extractable: true });
  const publicJwk = { ...(await exportJWK(publicKey)), kid, alg, use: 'sig' };
  return { kid, alg, privateKey, publicJwk };
}

/** A token signed by `key`; `exp` one hour ahead unless the payload says otherwise. */
export async function signToken(key: TestSigningKey, payload: JWTPayload, header: Record<string, unknown> = {}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ iat: now, exp: now + 3600, ...payload })
    .setProtectedHeader({ alg: key.alg, kid: key.kid, ...header })
    .sign(key.privateKey);
}

/**
 * A JWKS endpoint on loopback (`GET /jwks`): the published keys can be swapped (rotation),
 * the endpoint made to fail (`down`), and fetches are counted.
 */
export interface MockJwks {
  readonly url: string;
  keys: JWK[];
  down: boolean;
  fetches: number;
  close(): Promise<void>;
}

export async function startMockJwks(keys: JWK[]): Promise<MockJwks> {
  const state = { keys, down: false, fetches: 0 };
  const server: Server = createServer((request, response) => {
    if (request.url !== '/jwks') {
      response.writeHead(404).end();
      return;
    }
    state.fetches += 1;
    if (state.down) {
      response.writeHead(503, { 'content-type': 'text/plain' }).end('down');
      return;
    }
    response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ keys: state.keys }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const mock = state as typeof state & { url: string; close: () => Promise<void> };
  mock.url = `http://127.0.0.1:${port}/jwks`;
  mock.close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return mock;
}
