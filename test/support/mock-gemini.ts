import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

// A real HTTP server on loopback speaking Gemini's native API (generativelanguage v1beta):
// `POST /v1beta/models/{model}:generateContent`, `:streamGenerateContent?alt=sse` (frames
// separated by CRLF CRLF, as Google sends them), `:batchEmbedContents`, `GET /v1beta/models`,
// errors in Google's envelope. The key must come in `x-goog-api-key` (a wrong or missing one
// gets Google's 400 API_KEY_INVALID). Behaviour is chosen by the model name:
// gemini-tool (function call, then an answer using the function response), gemini-429
// (RESOURCE_EXHAUSTED), gemini-500, gemini-cut (stream dropped after two chunks),
// gemini-stream-error (stream broken by an error event); anything else answers text, with a
// thought summary when `includeThoughts` is asked.

export const MOCK_GEMINI_TEXT = 'Hello from Gemini!';
export const MOCK_GEMINI_THOUGHT = '**Greeting the user**\n\nA short hello will do.';
/** usageMetadata of every text answer. */
export const MOCK_GEMINI_USAGE = { promptTokenCount: 12, candidatesTokenCount: 5, cachedContentTokenCount: 4, thoughtsTokenCount: 7 };
/** Listed by `GET /v1beta/models` besides the fixture's models. */
const mockModels = ['gemini-2.5-flash', 'gemini-tool', 'gemini-429', 'gemini-500', 'gemini-cut', 'gemini-stream-error'];
export const MOCK_GEMINI_SIGNATURE = 'CiQBVKhc7sigMockSignature';

const fixture = (name: string): string => readFileSync(new URL(`../fixtures/gemini/${name}`, import.meta.url), 'utf8');

export interface GeminiRecordedRequest {
  method: string;
  /** The path without the query. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: Record<string, unknown> | null;
}

export interface MockGemini {
  /** The native API base, `http://127.0.0.1:<port>/v1beta`. */
  readonly url: string;
  readonly requests: GeminiRecordedRequest[];
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value);

function send(response: ServerResponse, status: number, body: unknown): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json; charset=UTF-8', 'content-length': Buffer.byteLength(text) });
  response.end(text);
}

const googleError = (code: number, status: string, message: string): Json => ({ error: { code, message, status } });

function usage(): Json {
  const { promptTokenCount, candidatesTokenCount, thoughtsTokenCount } = MOCK_GEMINI_USAGE;
  return { ...MOCK_GEMINI_USAGE, totalTokenCount: promptTokenCount + candidatesTokenCount + thoughtsTokenCount };
}

/** The parts of the model's answer to a request. */
function answerParts(model: string, request: Json): Json[] {
  const contents = Array.isArray(request['contents']) ? request['contents'].filter(isRecord) : [];
  const lastParts = (contents.at(-1)?.['parts'] as Json[] | undefined) ?? [];
  if (model === 'gemini-tool') {
    const answered = lastParts.find((part) => isRecord(part['functionResponse']));
    if (answered === undefined) {
      return [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: MOCK_GEMINI_SIGNATURE }];
    }
    return [{ text: `Weather: ${JSON.stringify((answered['functionResponse'] as Json)['response'])}` }];
  }
  const config = isRecord(request['generationConfig']) ? request['generationConfig'] : {};
  const thinking = isRecord(config['thinkingConfig']) ? config['thinkingConfig'] : {};
  const thought = thinking['includeThoughts'] === true ? [{ text: MOCK_GEMINI_THOUGHT, thought: true }] : [];
  return [...thought, { text: MOCK_GEMINI_TEXT }];
}

function answer(model: string, parts: Json[]): Json {
  return {
    candidates: [
      {
        content: { parts, role: 'model' },
        finishReason: 'STOP',
        index: 0,
        safetyRatings: [{ category: 'HARM_CATEGORY_HARASSMENT', probability: 'NEGLIGIBLE' }],
      },
    ],
    usageMetadata: usage(),
    modelVersion: model,
    responseId: 'mockResponseId',
  };
}

/** The SSE frames of a streamed answer: one per part, text split in two, the finish reason and usage on the last. */
function streamFrames(model: string, parts: Json[]): string[] {
  const pieces = parts.flatMap((part) => {
    const text = part['text'];
    if (typeof text !== 'string' || part['thought'] === true) return [part];
    const half = Math.ceil(text.length / 2);
    return [{ text: text.slice(0, half) }, { text: text.slice(half) }];
  });
  return pieces.map((part, index) => {
    const last = index === pieces.length - 1;
    const candidate: Json = { content: { parts: [part], role: 'model' }, index: 0 };
    if (last)
      Object.assign(candidate, {
        finishReason: 'STOP',
        safetyRatings: [{ category: 'HARM_CATEGORY_HARASSMENT', probability: 'NEGLIGIBLE' }],
      });
    const event = {
      candidates: [candidate],
      usageMetadata: last ? usage() : { promptTokenCount: 12 },
      modelVersion: model,
      responseId: 'mockStreamId',
    };
    return `data: ${JSON.stringify(event)}\r\n\r\n`;
  });
}

class MockGeminiServer implements MockGemini {
  url = '';
  readonly requests: GeminiRecordedRequest[] = [];
  readonly server: Server;
  private readonly sockets = new Set<Socket>();
  private readonly apiKey: string;

  constructor(apiKey: string) {
    this.apiKey = apiKey;
    this.server = createServer((request, response) => {
      void this.handle(request, response).catch(() => response.destroy());
    });
    this.server.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private async handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    const url = new URL(request.url ?? '/', 'http://mock');
    let body: Json | null = null;
    try {
      body = raw === '' ? null : (JSON.parse(raw) as Json);
    } catch {
      body = null;
    }
    this.requests.push({ method: request.method ?? '', path: url.pathname, query: url.searchParams, headers: request.headers, body });
    if (request.headers['x-goog-api-key'] !== this.apiKey || url.searchParams.has('key')) {
      return send(response, 400, fixture('error-api-key.json'));
    }
    if (request.method === 'GET' && url.pathname === '/v1beta/models') {
      const { models } = JSON.parse(fixture('models-page.json')) as { models: Json[] };
      const served = mockModels.map((name) => ({ name: `models/${name}`, supportedGenerationMethods: ['generateContent'] }));
      return send(response, 200, { models: [...models, ...served] });
    }
    const match = /^\/v1beta\/models\/([^/:]+):(generateContent|streamGenerateContent|batchEmbedContents)$/.exec(url.pathname);
    if (request.method !== 'POST' || match === null || body === null)
      return send(response, 404, googleError(404, 'NOT_FOUND', 'Not found'));
    const model = decodeURIComponent(match[1] ?? '');
    if (model === 'gemini-429') return send(response, 429, fixture('error-429.json'));
    if (model === 'gemini-500') return send(response, 500, googleError(500, 'INTERNAL', 'An internal error has occurred.'));
    if (match[2] === 'batchEmbedContents') return this.embed(response, body);
    const parts = answerParts(model, body);
    if (match[2] === 'generateContent') return send(response, 200, answer(model, parts));
    if (url.searchParams.get('alt') !== 'sse')
      return send(response, 400, googleError(400, 'INVALID_ARGUMENT', 'this mock streams SSE only'));
    return this.stream(response, model, streamFrames(model, parts));
  }

  private embed(response: ServerResponse, body: Json): void {
    const requests = Array.isArray(body['requests']) ? body['requests'].filter(isRecord) : [];
    const embeddings = requests.map((item, index) => {
      const size = typeof item['outputDimensionality'] === 'number' ? item['outputDimensionality'] : 3;
      return { values: Array.from({ length: size }, (_unused, position) => index + position / 10) };
    });
    send(response, 200, { embeddings });
  }

  private async stream(response: ServerResponse, model: string, frames: string[]): Promise<void> {
    response.writeHead(200, { 'content-type': 'text/event-stream', 'transfer-encoding': 'chunked' });
    if (model === 'gemini-cut') {
      response.write(frames[0] ?? '');
      await new Promise((resolve) => setTimeout(resolve, 50));
      response.socket?.destroy();
      return;
    }
    if (model === 'gemini-stream-error') {
      response.write(frames[0] ?? '');
      await new Promise((resolve) => setTimeout(resolve, 50));
      response.end(`data: ${JSON.stringify(googleError(503, 'UNAVAILABLE', 'The model is overloaded. Please try again later.'))}\r\n\r\n`);
      return;
    }
    for (const frame of frames) {
      if (!response.write(frame)) await once(response, 'drain');
    }
    response.end();
  }
}

export async function startMockGemini(apiKey: string): Promise<MockGemini> {
  const mock = new MockGeminiServer(apiKey);
  await new Promise<void>((resolve, reject) => {
    mock.server.once('error', reject);
    mock.server.listen(0, '127.0.0.1', () => {
      mock.server.off('error', reject);
      resolve();
    });
  });
  mock.url = `http://127.0.0.1:${(mock.server.address() as AddressInfo).port}/v1beta`;
  return mock;
}
