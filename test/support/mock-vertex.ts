import { once } from 'node:events';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';

import { messageJson, messagesRequestProblem, streamEvents, type AnswerSpec } from './mock-anthropic-wire.ts';
import { assertionProblem, JWT_BEARER_GRANT, type ServiceAccount } from './mock-google-oauth.ts';

// A loopback mock of Google Vertex AI and its OAuth token endpoint, byte for byte in the wire
// formats: POST /token (JWT-bearer assertions of the test's service accounts, short-lived
// access tokens), and under /v1/projects/{p}/locations/{l}/publishers/{google|anthropic}/models/
// {model}:{generateContent|streamGenerateContent|rawPredict|streamRawPredict|predict}, each
// checking the bearer token it issued. Behaviour by model: error-429 (RESOURCE_EXHAUSTED),
// error-401 (UNAUTHENTICATED), error-500 (INTERNAL), stream-break (the connection drops after two chunks).
// Gemini answers carry safetyRatings; a request asking for thoughts (thinkingConfig.includeThoughts)
// gets a thought part first and thoughtsTokenCount, and its function call a thoughtSignature.

export const MOCK_GEMINI_TEXT = ['Hello', ' from', ' Vertex', ' Gemini'];
export const MOCK_GEMINI_USAGE = { promptTokenCount: 9, candidatesTokenCount: 4, totalTokenCount: 13 };
export const MOCK_GEMINI_THOUGHT = 'Thinking it over.';
export const MOCK_GEMINI_THOUGHT_TOKENS = 6;
export const MOCK_THOUGHT_SIGNATURE = 'c2lnbmF0dXJlLW9mLXRoZS10aG91Z2h0';
export const MOCK_SAFETY_RATINGS = [
  {
    category: 'HARM_CATEGORY_HATE_SPEECH',
    probability: 'NEGLIGIBLE',
    probabilityScore: 0.021,
    severity: 'HARM_SEVERITY_NEGLIGIBLE',
    severityScore: 0.034,
  },
];
export const CLOUD_PLATFORM = 'https://www.googleapis.com/auth/cloud-platform';

export interface VertexCall {
  publisher: string;
  model: string;
  method: string;
  project: string;
  location: string;
  query: string;
  token: string;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown>;
}

export interface MockVertexOptions {
  accounts: ServiceAccount[];
  /** `expires_in` of the tokens issued to an account (seconds; default 3600); google-auth-library refreshes 5 minutes ahead. */
  lifetimeOf?: (clientEmail: string) => number;
}

export interface IssuedToken {
  token: string;
  clientEmail: string;
}

export interface MockVertex {
  /** `http://127.0.0.1:<port>`: the `base_url` of a vertex instance. */
  readonly url: string;
  readonly tokenUri: string;
  readonly calls: VertexCall[];
  /** Access tokens issued, in order. */
  readonly issued: IssuedToken[];
  /** Token requests refused (bad assertion). */
  readonly refused: string[];
  /** Makes an issued token invalid before its expiry (as a revoked one is). */
  revoke(token: string): void;
  close(): Promise<void>;
}

const JSON_HEADERS = { 'content-type': 'application/json; charset=UTF-8' };
const modelPath = /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/([^/]+)\/models\/([^/:]+):(\w+)$/;

export async function startMockVertex(options: MockVertexOptions): Promise<MockVertex> {
  const calls: VertexCall[] = [];
  const issued: IssuedToken[] = [];
  const refused: string[] = [];
  const expiries = new Map<string, number>();
  const sockets = new Set<Socket>();

  const issue = (form: URLSearchParams, response: ServerResponse): void => {
    const assertion = form.get('assertion') ?? '';
    const problem =
      form.get('grant_type') !== JWT_BEARER_GRANT ? 'Invalid grant_type' : assertionProblem(assertion, options.accounts, CLOUD_PLATFORM);
    if (problem !== null) {
      refused.push(problem);
      response.writeHead(400, JSON_HEADERS).end(JSON.stringify({ error: 'invalid_grant', error_description: problem }));
      return;
    }
    const token = `ya29.mock-${issued.length + 1}`;
    const clientEmail = issuerOf(assertion);
    const lifetime = options.lifetimeOf?.(clientEmail) ?? 3600;
    issued.push({ token, clientEmail });
    expiries.set(token, Date.now() + lifetime * 1000);
    response.writeHead(200, JSON_HEADERS).end(JSON.stringify({ access_token: token, expires_in: lifetime, token_type: 'Bearer' }));
  };

  const server = createServer((request, response) => {
    void readAll(request).then(async (raw) => {
      const url = new URL(request.url ?? '/', 'http://mock');
      if (request.method === 'POST' && url.pathname === '/token') return issue(new URLSearchParams(raw), response);
      const match = modelPath.exec(url.pathname);
      if (request.method !== 'POST' || match === null) return googleError(response, 404, 'NOT_FOUND', `no route ${url.pathname}`);
      const token = /^Bearer (.+)$/.exec(request.headers.authorization ?? '')?.[1] ?? '';
      const expiry = expiries.get(token);
      if (expiry === undefined || expiry < Date.now()) {
        return googleError(
          response,
          401,
          'UNAUTHENTICATED',
          'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.',
        );
      }
      const [, project = '', location = '', publisher = '', model = '', method = ''] = match;
      const body = parseObject(raw);
      const call = {
        publisher,
        model: decodeURIComponent(model),
        method,
        project,
        location,
        query: url.search,
        token,
        headers: request.headers,
        body,
      };
      calls.push(call);
      await answer(call, response);
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    tokenUri: `${url}/token`,
    calls,
    issued,
    refused,
    revoke: (token) => void expiries.delete(token),
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

async function answer(call: VertexCall, response: ServerResponse): Promise<void> {
  if (call.model === 'error-429') {
    return googleError(
      response,
      429,
      'RESOURCE_EXHAUSTED',
      'Resource exhausted. Please try again later. Please refer to https://cloud.google.com/vertex-ai/generative-ai/docs/error-code-429 for more details.',
    );
  }
  if (call.model === 'error-500') return googleError(response, 500, 'INTERNAL', 'Internal error encountered.');
  if (call.model === 'error-401') return googleError(response, 401, 'UNAUTHENTICATED', 'Request had invalid authentication credentials.');
  if (call.publisher === 'anthropic') return answerClaude(call, response);
  if (call.method === 'predict') return void response.writeHead(200, JSON_HEADERS).end(JSON.stringify(predictAnswer(call.body)));
  if (call.method === 'generateContent') return void response.writeHead(200, JSON_HEADERS).end(JSON.stringify(geminiAnswer(call)));
  if (call.method === 'streamGenerateContent' && call.query === '?alt=sse') return streamGemini(call, response);
  return googleError(response, 400, 'INVALID_ARGUMENT', `unsupported method ${call.method}${call.query}`);
}

/** Whether the request asks for thought summaries (`generationConfig.thinkingConfig.includeThoughts`). */
function thinks(call: VertexCall): boolean {
  const config = call.body['generationConfig'] as { thinkingConfig?: { includeThoughts?: unknown } } | undefined;
  return config?.thinkingConfig?.includeThoughts === true;
}

function usageOf(call: VertexCall): Record<string, unknown> {
  if (!thinks(call)) return { ...MOCK_GEMINI_USAGE, trafficType: 'ON_DEMAND' };
  const total = MOCK_GEMINI_USAGE.totalTokenCount + MOCK_GEMINI_THOUGHT_TOKENS;
  return { ...MOCK_GEMINI_USAGE, thoughtsTokenCount: MOCK_GEMINI_THOUGHT_TOKENS, totalTokenCount: total, trafficType: 'ON_DEMAND' };
}

function geminiAnswer(call: VertexCall): Record<string, unknown> {
  const calling = Array.isArray(call.body['tools']);
  const signature = thinks(call) ? { thoughtSignature: MOCK_THOUGHT_SIGNATURE } : {};
  const answer = calling
    ? [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, ...signature }]
    : [{ text: MOCK_GEMINI_TEXT.join('') }];
  const parts = thinks(call) ? [{ text: MOCK_GEMINI_THOUGHT, thought: true }, ...answer] : answer;
  return {
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', safetyRatings: MOCK_SAFETY_RATINGS, avgLogprobs: -0.2 }],
    usageMetadata: usageOf(call),
    modelVersion: call.model,
    createTime: '2025-06-05T10:22:13.918617Z',
    responseId: `resp-${call.model}`,
  };
}

async function streamGemini(call: VertexCall, response: ServerResponse): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'transfer-encoding': 'chunked' });
  const base = { modelVersion: call.model, createTime: '2025-06-05T10:22:13.918617Z', responseId: `resp-${call.model}` };
  if (thinks(call)) {
    const thought = { content: { role: 'model', parts: [{ text: MOCK_GEMINI_THOUGHT, thought: true }] } };
    response.write(`data: ${JSON.stringify({ candidates: [thought], usageMetadata: { trafficType: 'ON_DEMAND' }, ...base })}\r\n\r\n`);
  }
  for (const [index, text] of MOCK_GEMINI_TEXT.entries()) {
    if (call.model === 'stream-break' && index === 2) {
      await sleep(20);
      response.socket?.destroy();
      return;
    }
    const last = index === MOCK_GEMINI_TEXT.length - 1;
    const end = last ? { finishReason: 'STOP', safetyRatings: MOCK_SAFETY_RATINGS } : {};
    const candidate = { content: { role: 'model', parts: [{ text }] }, ...end };
    const usage = last ? usageOf(call) : { trafficType: 'ON_DEMAND' };
    response.write(`data: ${JSON.stringify({ candidates: [candidate], usageMetadata: usage, ...base })}\r\n\r\n`);
    await sleep(5);
  }
  response.end();
}

function answerClaude(call: VertexCall, response: ServerResponse): void {
  if (call.method === 'rawPredict' && call.model === 'count-tokens') {
    return void response.writeHead(200, JSON_HEADERS).end(JSON.stringify({ input_tokens: 21 }));
  }
  const { anthropic_version: version, ...rest } = call.body;
  const problem =
    version !== 'vertex-2023-10-16'
      ? 'anthropic_version: vertex-2023-10-16 is required'
      : 'model' in rest
        ? 'model: Extra inputs are not permitted'
        : messagesRequestProblem({ ...rest, model: call.model });
  if (problem !== null) {
    return void response
      .writeHead(400, JSON_HEADERS)
      .end(JSON.stringify({ type: 'error', error: { type: 'invalid_request_error', message: problem } }));
  }
  const spec: AnswerSpec = {
    model: call.model,
    counter: 1,
    usage: { input_tokens: 12, cache_creation_input_tokens: 0, cache_read_input_tokens: 0, output_tokens: 0 },
    toolUse: Array.isArray(rest['tools']) ? { name: 'get_weather', input: { city: 'Paris' } } : undefined,
    chunkCount: 3,
  };
  if (call.method === 'rawPredict') return void response.writeHead(200, JSON_HEADERS).end(messageJson(spec));
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  response.end(streamEvents(spec).join(''));
}

function predictAnswer(body: Record<string, unknown>): Record<string, unknown> {
  const instances = Array.isArray(body['instances']) ? (body['instances'] as { content?: string }[]) : [];
  const predictions = instances.map((instance, index) => ({
    embeddings: {
      statistics: { truncated: false, token_count: (instance.content ?? '').split(' ').length },
      values: [0.5 + index, -0.25, 0.125],
    },
  }));
  return { predictions, metadata: { billableCharacterCount: 10 } };
}

function issuerOf(assertion: string): string {
  const claims = parseObject(Buffer.from(assertion.split('.')[1] ?? '', 'base64url').toString('utf8'));
  return typeof claims['iss'] === 'string' ? claims['iss'] : '';
}

function googleError(response: ServerResponse, code: number, status: string, message: string): void {
  response.writeHead(code, JSON_HEADERS).end(JSON.stringify({ error: { code, message, status } }));
}

async function readAll(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

function parseObject(text: string): Record<string, unknown> {
  try {
    const parsed: unknown = JSON.parse(text);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}
