import { createHash, createHmac, timingSafeEqual } from 'node:crypto';

// An independent AWS Signature Version 4 implementation (node:crypto only, written from
// AWS's documented algorithm), used by the mock Bedrock server to check the gateway's
// Authorization header, and by the signer's tests as a second derivation.

export interface SigV4Input {
  method: string;
  /** The request path as sent (already percent-encoded), without the query. */
  path: string;
  /** The raw query string, without `?`. */
  query: string;
  /** Header names in lower case. */
  headers: Readonly<Record<string, string | string[] | undefined>>;
  body: Buffer | string;
}

export interface ParsedAuthorization {
  accessKeyId: string;
  date: string;
  region: string;
  service: string;
  signedHeaders: string[];
  signature: string;
}

const sha256 = (data: Buffer | string): string => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string): Buffer => createHmac('sha256', key).update(data).digest();

/** RFC 3986 encoding: everything but unreserved characters. */
function encode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

export function parseAuthorization(header: string | undefined): ParsedAuthorization | null {
  const match =
    /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, ?SignedHeaders=([^,]+), ?Signature=([0-9a-f]{64})$/.exec(
      header ?? '',
    );
  if (match === null) return null;
  const [accessKeyId = '', date = '', region = '', service = '', signedHeaders = '', signature = ''] = match.slice(1);
  return { accessKeyId, date, region, service, signedHeaders: signedHeaders.split(';'), signature };
}

/** The canonical request: every path segment encoded once more (non-S3 services), query and headers sorted. */
export function canonicalRequest(input: SigV4Input, signedHeaders: readonly string[]): string {
  const path = input.path.split('/').map(encode).join('/') || '/';
  const pairs =
    input.query === '' ? [] : input.query.split('&').map((pair) => pair.split('=').map((part) => encode(decodeURIComponent(part ?? ''))));
  const query = pairs
    .map(([key, value]) => `${key}=${value ?? ''}`)
    .sort()
    .join('&');
  const headerLines = signedHeaders.map((name) => {
    const value = input.headers[name];
    const text = Array.isArray(value) ? value.join(',') : (value ?? '');
    return `${name}:${text.trim().replace(/\s+/g, ' ')}\n`;
  });
  return [input.method, path, query, headerLines.join(''), signedHeaders.join(';'), sha256(input.body)].join('\n');
}

/** The signature of a request for the given key, date (`YYYYMMDDTHHMMSSZ`), region and service. */
export function computeSignature(
  input: SigV4Input,
  secret: string,
  amzDate: string,
  region: string,
  service: string,
  signedHeaders: readonly string[],
): string {
  const day = amzDate.slice(0, 8);
  const scope = `${day}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonicalRequest(input, signedHeaders))].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, day), region), service), 'aws4_request');
  return createHmac('sha256', key).update(stringToSign).digest('hex');
}

/** Why a request's SigV4 header does not verify, or null when it does. */
export function sigV4Problem(input: SigV4Input, secrets: ReadonlyMap<string, string>, service: string): string | null {
  const authorization = input.headers['authorization'];
  const parsed = parseAuthorization(Array.isArray(authorization) ? authorization[0] : authorization);
  if (parsed === null) return 'Missing Authentication Token';
  const secret = secrets.get(parsed.accessKeyId);
  if (secret === undefined) return 'The security token included in the request is invalid.';
  if (parsed.service !== service) return `Credential should be scoped to correct service: '${service}'.`;
  if (!parsed.signedHeaders.includes('host') || !parsed.signedHeaders.includes('x-amz-date')) return 'host and x-amz-date must be signed';
  const amzDate = input.headers['x-amz-date'];
  if (typeof amzDate !== 'string' || amzDate.slice(0, 8) !== parsed.date) return 'x-amz-date does not match the credential scope';
  const expected = computeSignature(input, secret, amzDate, parsed.region, parsed.service, parsed.signedHeaders);
  const matches = timingSafeEqual(Buffer.from(expected), Buffer.from(parsed.signature));
  return matches ? null : 'The request signature we calculated does not match the signature you provided.';
}
