import type { Hash as HashClass } from '@smithy/hash-node';
import type { SignatureV4 as SignatureV4Class } from '@smithy/signature-v4';

interface Signing {
  Hash: typeof HashClass;
  SignatureV4: typeof SignatureV4Class;
}

/** The @smithy signing packages, loaded on the first signed request (not at start-up). */
let signing: Promise<Signing> | null = null;

function loadSigning(): Promise<Signing> {
  signing ??= import('../../lazy/smithy-signing.ts').then((smithy) => ({ Hash: smithy.Hash, SignatureV4: smithy.SignatureV4 }));
  return signing;
}

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string;
}

export interface SignableRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string | Buffer;
}

export interface SignOptions {
  credentials: AwsCredentials;
  region: string;
  /** `bedrock` for both the runtime and the control plane. */
  service: string;
  /** Fixed signing time (tests); now when absent. */
  signingDate?: Date;
}

/**
 * Signs a request with AWS Signature Version 4 (AWS's own `@smithy/signature-v4`) and returns
 * the headers to send: the given ones plus `x-amz-date`, `x-amz-security-token` when there is
 * a session token, and `authorization`. The `host` header is signed but left out of the
 * result (the HTTP client sends the same value).
 */
export async function signRequest(request: SignableRequest, options: SignOptions): Promise<Record<string, string>> {
  const { Hash, SignatureV4 } = await loadSigning();
  const signer = new SignatureV4({
    service: options.service,
    region: options.region,
    credentials: options.credentials,
    sha256: Hash.bind(null, 'sha256'),
    uriEscapePath: true,
    applyChecksum: false,
  });
  const query: Record<string, string> = {};
  for (const [key, value] of request.url.searchParams) query[key] = value;
  const signed = await signer.sign(
    {
      method: request.method,
      protocol: request.url.protocol,
      hostname: request.url.hostname,
      ...(request.url.port === '' ? {} : { port: Number(request.url.port) }),
      path: request.url.pathname,
      query,
      headers: { ...request.headers, host: request.url.host },
      body: request.body ?? '',
    },
    options.signingDate === undefined ? {} : { signingDate: options.signingDate },
  );
  const { host: _host, ...headers } = signed.headers;
  return headers;
}
