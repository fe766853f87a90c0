import { once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';

import { parseAuthorization, sigV4Problem } from './sigv4-verify.ts';

// A real HTTP server on loopback speaking AWS Bedrock's runtime API as the gateway's Bedrock
// adapter calls it: Converse (JSON), ConverseStream (AWS's binary event stream, frames
// encoded with EventStreamCodec), InvokeModel for Titan and Cohere embeddings, and the
// control plane's GET /foundation-models. Every request must carry a SigV4 Authorization
// header that verifies (recomputed with test/support/sigv4-verify.ts) or a known Bedrock
// API key; errors are `{"message"}` with `x-amzn-ErrorType`, as AWS answers them. The model
// id (decoded from the path) picks the behaviour: `throttled` (429 ThrottlingException),
// `unavailable` (503), `model-timeout` (408 ModelTimeoutException), `stream-exception` (a stream broken by modelStreamErrorException after
// one delta), `stream-throttled` (a 200 stream with throttlingException right after messageStart); a request
// with tools gets a toolUse of its first tool.

export const MOCK_BEDROCK_TEXT = ['Hello', ' from', ' Bedrock'];
export const MOCK_BEDROCK_USAGE = {
  inputTokens: 11,
  outputTokens: 3,
  totalTokens: 64,
  cacheReadInputTokens: 40,
  cacheWriteInputTokens: 10,
};

export interface BedrockRecordedRequest {
  method: string;
  /** The path as sent (percent-encoded). */
  rawPath: string;
  /** The model id decoded from `/model/{id}/...`, or null. */
  model: string | null;
  action: string | null;
  headers: IncomingMessage['headers'];
  body: unknown;
  /** The access key id and region of the SigV4 credential scope, or null for a bearer key. */
  signedBy: { accessKeyId: string; region: string } | null;
}

export interface MockBedrockOptions {
  /** Access key id -> secret the mock accepts. */
  credentials: ReadonlyMap<string, string>;
  /** Bedrock API keys accepted as `Authorization: Bearer`. */
  apiKeys?: readonly string[];
}

export interface MockBedrock {
  readonly url: string;
  readonly requests: BedrockRecordedRequest[];
  close(): Promise<void>;
}

const codec = new EventStreamCodec(toUtf8, fromUtf8);

function frame(headers: Record<string, string>, payload: unknown): Uint8Array {
  const encoded: Record<string, { type: 'string'; value: string }> = {};
  for (const [name, value] of Object.entries(headers)) encoded[name] = { type: 'string', value };
  return codec.encode({ headers: encoded, body: fromUtf8(JSON.stringify(payload)) });
}

const event = (type: string, payload: unknown): Uint8Array =>
  frame({ ':event-type': type, ':content-type': 'application/json', ':message-type': 'event' }, payload);
const exception = (type: string, message: string): Uint8Array =>
  frame({ ':exception-type': type, ':content-type': 'application/json', ':message-type': 'exception' }, { message });

function sendError(response: ServerResponse, status: number, type: string, message: string): void {
  response.writeHead(status, {
    'content-type': 'application/json',
    'x-amzn-errortype': `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
  });
  response.end(JSON.stringify({ message }));
}

function sendJson(response: ServerResponse, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(200, { 'content-type': 'application/json', 'x-amzn-requestid': 'req-0001', ...headers });
  response.end(JSON.stringify(body));
}

function firstToolName(body: Record<string, unknown>): string | null {
  const config = body['toolConfig'] as { tools?: { toolSpec?: { name?: string } }[] } | undefined;
  return config?.tools?.[0]?.toolSpec?.name ?? null;
}

function converse(body: Record<string, unknown>): Record<string, unknown> {
  const tool = firstToolName(body);
  const content =
    tool === null
      ? [{ text: MOCK_BEDROCK_TEXT.join('') }]
      : [{ toolUse: { toolUseId: 'tooluse_mock1', name: tool, input: { city: 'Paris' } } }];
  return {
    output: { message: { role: 'assistant', content } },
    stopReason: tool === null ? 'end_turn' : 'tool_use',
    usage: MOCK_BEDROCK_USAGE,
    metrics: { latencyMs: 5 },
  };
}

function streamFrames(model: string, body: Record<string, unknown>): Uint8Array[] {
  const frames = [event('messageStart', { role: 'assistant' })];
  if (model === 'stream-throttled')
    return [...frames, exception('throttlingException', 'Too many tokens, please wait before trying again.')];
  const tool = firstToolName(body);
  if (tool !== null) {
    frames.push(event('contentBlockStart', { contentBlockIndex: 0, start: { toolUse: { toolUseId: 'tooluse_mock1', name: tool } } }));
    frames.push(event('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: '{"city":' } } }));
    frames.push(event('contentBlockDelta', { contentBlockIndex: 0, delta: { toolUse: { input: '"Paris"}' } } }));
  } else {
    for (const text of MOCK_BEDROCK_TEXT) {
      frames.push(event('contentBlockDelta', { contentBlockIndex: 0, delta: { text }, p: 'abcdef' }));
      if (model === 'stream-exception') return [...frames, exception('modelStreamErrorException', 'The model stream failed mid-way.')];
    }
  }
  frames.push(event('contentBlockStop', { contentBlockIndex: 0 }));
  frames.push(event('messageStop', { stopReason: tool === null ? 'end_turn' : 'tool_use' }));
  frames.push(event('metadata', { usage: MOCK_BEDROCK_USAGE, metrics: { latencyMs: 5 } }));
  return frames;
}

function invoke(model: string, body: Record<string, unknown>, response: ServerResponse): void {
  const vector = (text: string): number[] => [text.length / 10, 0.5, -0.25];
  if (model.startsWith('amazon.titan-embed')) {
    const text = String(body['inputText'] ?? '');
    return sendJson(response, { embedding: vector(text), inputTextTokenCount: text.split(' ').length });
  }
  if (model.startsWith('cohere.embed')) {
    const texts = (body['texts'] as string[] | undefined) ?? [];
    if (body['input_type'] === undefined)
      return sendError(response, 400, 'ValidationException', 'Malformed input request: #: required key [input_type] not found');
    return sendJson(
      response,
      { embeddings: texts.map(vector), id: 'emb-1', response_type: 'embeddings_floats', texts },
      { 'x-amzn-bedrock-input-token-count': String(texts.length * 2) },
    );
  }
  sendError(response, 400, 'ValidationException', 'The provided model identifier is invalid.');
}

async function readAll(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function authProblem(
  request: IncomingMessage,
  raw: Buffer,
  options: MockBedrockOptions,
): { problem: string | null; signedBy: BedrockRecordedRequest['signedBy'] } {
  const authorization = request.headers['authorization'] ?? '';
  if (authorization.startsWith('Bearer ')) {
    const known = (options.apiKeys ?? []).includes(authorization.slice('Bearer '.length));
    return { problem: known ? null : 'Invalid API Key format', signedBy: null };
  }
  const [path = '', query = ''] = (request.url ?? '').split('?');
  const problem = sigV4Problem(
    { method: request.method ?? '', path, query, headers: request.headers, body: raw },
    options.credentials,
    'bedrock',
  );
  const parsed = parseAuthorization(authorization);
  return { problem, signedBy: parsed === null ? null : { accessKeyId: parsed.accessKeyId, region: parsed.region } };
}

async function handle(
  request: IncomingMessage,
  response: ServerResponse,
  options: MockBedrockOptions,
  requests: BedrockRecordedRequest[],
): Promise<void> {
  const raw = await readAll(request);
  const rawPath = (request.url ?? '').split('?')[0] ?? '';
  const match = /^\/model\/([^/]+)\/(converse|converse-stream|invoke)$/.exec(rawPath);
  const model = match === null ? null : decodeURIComponent(match[1] ?? '');
  const body = raw.length > 0 ? (JSON.parse(raw.toString('utf8')) as Record<string, unknown>) : {};
  const { problem, signedBy } = authProblem(request, raw, options);
  requests.push({ method: request.method ?? '', rawPath, model, action: match?.[2] ?? null, headers: request.headers, body, signedBy });
  if (problem !== null) return sendError(response, 403, signedBy === null ? 'AccessDeniedException' : 'InvalidSignatureException', problem);
  if (request.method === 'GET' && rawPath === '/foundation-models') {
    return sendJson(response, {
      modelSummaries: [{ modelId: 'anthropic.claude-3-5-sonnet-20241022-v2:0', modelLifecycle: { status: 'ACTIVE' } }],
    });
  }
  if (match === null || model === null) return sendError(response, 404, 'UnknownOperationException', 'Unknown operation');
  if (model === 'throttled') return sendError(response, 429, 'ThrottlingException', 'Too many requests, please wait before trying again.');
  if (model === 'model-timeout') return sendError(response, 408, 'ModelTimeoutException', 'Model has timed out in processing the request.');
  if (model === 'unavailable') return sendError(response, 503, 'ServiceUnavailableException', 'Bedrock is unable to process your request.');
  if (match[2] === 'invoke') return invoke(model, body, response);
  if (match[2] === 'converse') return sendJson(response, converse(body));
  response.writeHead(200, { 'content-type': 'application/vnd.amazon.eventstream', 'x-amzn-requestid': 'req-0002' });
  for (const bytes of streamFrames(model, body)) response.write(bytes);
  response.end();
}

export async function startMockBedrock(options: MockBedrockOptions): Promise<MockBedrock> {
  const requests: BedrockRecordedRequest[] = [];
  const server: Server = createServer((request, response) => {
    handle(request, response, options, requests).catch((error: unknown) => {
      if (!response.headersSent) sendError(response, 500, 'InternalServerException', String(error));
      else response.destroy();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
