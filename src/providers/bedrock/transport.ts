import type { Readable } from 'node:stream';
import type { ProviderSettings } from '../provider-settings.ts';
import type { UpstreamClient, UpstreamRequest, UpstreamResponse } from '../upstream-client.ts';
import { signRequest, type AwsCredentials } from './sigv4.ts';

/** Region used when neither `region` nor AWS_REGION / AWS_DEFAULT_REGION is set. */
export const defaultRegion = 'us-east-1';

export interface TransportRequest {
  method: string;
  url: URL;
  headers: Record<string, string>;
  body?: string | Buffer | Readable | null;
  signal: AbortSignal;
}

/**
 * Sends requests to one Bedrock instance with its credentials: a Bedrock API key as
 * `Authorization: Bearer`, else AWS SigV4 with the access key (service `bedrock`, the
 * instance's region). Also knows the instance's endpoints: the runtime
 * (`bedrock-runtime.{region}`) and the control plane (`bedrock.{region}`), or `base_url`
 * for both, native paths kept under it.
 */
export class BedrockTransport {
  readonly provider: string;
  readonly region: string;
  readonly runtimeBase: string;
  readonly controlBase: string;
  private readonly apiKey: string | null;
  private readonly credentials: AwsCredentials | null;
  private readonly client: UpstreamClient;

  constructor(settings: ProviderSettings, client: UpstreamClient) {
    const options = settings.options;
    this.provider = settings.name;
    this.client = client;
    this.region = options.region ?? defaultRegion;
    this.runtimeBase = settings.baseUrl !== '' ? settings.baseUrl : `https://bedrock-runtime.${this.region}.amazonaws.com`;
    this.controlBase = settings.baseUrl !== '' ? settings.baseUrl : `https://bedrock.${this.region}.amazonaws.com`;
    this.apiKey = settings.apiKey;
    this.credentials =
      options.awsAccessKeyId !== undefined && options.awsSecretAccessKey !== undefined
        ? {
            accessKeyId: options.awsAccessKeyId,
            secretAccessKey: options.awsSecretAccessKey,
            ...(options.awsSessionToken === undefined ? {} : { sessionToken: options.awsSessionToken }),
          }
        : null;
  }

  /** `{runtime}/model/{modelId}/{action}`, the model id percent-encoded (profile ids and ARNs carry `:` and `/`). */
  modelUrl(model: string, action: string): URL {
    return new URL(`${this.runtimeBase}/model/${encodeURIComponent(model)}/${action}`);
  }

  /** The API-key header, when the instance uses one (SigV4 headers depend on each request). */
  staticHeaders(): Record<string, string> {
    return this.apiKey === null ? {} : { authorization: `Bearer ${this.apiKey}` };
  }

  async send(request: TransportRequest): Promise<UpstreamResponse> {
    const { headers, body } = await this.authorize(request);
    return this.client.request({
      provider: this.provider,
      url: request.url,
      method: request.method,
      headers,
      body,
      signal: request.signal,
    });
  }

  /** The headers with the credentials, and the body to send (read whole when it is signed). */
  private async authorize(request: TransportRequest): Promise<Pick<UpstreamRequest, 'headers' | 'body'>> {
    if (this.apiKey !== null || this.credentials === null) {
      return { headers: { ...request.headers, ...this.staticHeaders() }, body: request.body ?? null };
    }
    const body = await bufferedBody(request.body);
    const signed = await signRequest(
      { method: request.method, url: request.url, headers: request.headers, body },
      { credentials: this.credentials, region: this.region, service: 'bedrock' },
    );
    return { headers: signed, body };
  }
}

/** A streamed body read whole: its hash is part of the signature. */
async function bufferedBody(body: TransportRequest['body']): Promise<string | Buffer> {
  if (body === undefined || body === null) return '';
  if (typeof body === 'string' || Buffer.isBuffer(body)) return body;
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as string));
  return Buffer.concat(chunks);
}
