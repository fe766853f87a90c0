import type { ServerResponse } from 'node:http';

import { MOCK_CONTENT, completionJson, readChatRequest, streamFrames } from './mock-openai-wire.ts';
import type { MockRequest, MockRouteHandler } from './mock-upstream.ts';

// Custom mock routes for the endpoint suites (embeddings, Responses API, Gemini's native
// model listing), mounted with mock.route(...). Each speaks the upstream's wire format.

export const MOCK_EMBEDDING_DIMENSIONS = 3;
/** prompt_tokens an embeddings answer reports per input string. */
export const MOCK_EMBEDDING_TOKENS_PER_INPUT = 4;
export const MOCK_RESPONSES_USAGE = {
  input_tokens: 11,
  input_tokens_details: { cached_tokens: 0 },
  output_tokens: 6,
  output_tokens_details: { reasoning_tokens: 0 },
  total_tokens: 17,
};
export const MOCK_WEATHER_ARGUMENTS = '{"city":"Paris"}';

function sendJson(response: ServerResponse, status: number, value: unknown): void {
  response.writeHead(status, { 'Content-Type': 'application/json' });
  response.end(JSON.stringify(value));
}

function fields(request: MockRequest): Record<string, unknown> {
  return typeof request.body === 'object' && request.body !== null ? (request.body as Record<string, unknown>) : {};
}

/** The vector the mock answers for the input at `index`. */
export function mockEmbedding(index: number): number[] {
  return Array.from({ length: MOCK_EMBEDDING_DIMENSIONS }, (_unused, dimension) => (index + 1) / 10 + dimension / 100);
}

/** OpenAI's `POST /embeddings`: one vector per input string, usage by input count; model `error-<status>` fails. */
export function embeddingsHandler(): MockRouteHandler {
  return (request, response) => {
    const body = fields(request);
    const input = body['input'];
    const inputs = Array.isArray(input) ? input : [input];
    if (typeof body['model'] !== 'string' || input === undefined) {
      sendJson(response, 400, { error: { message: 'mock upstream: model and input are required', type: 'invalid_request_error' } });
      return;
    }
    const failure = /^error-(\d{3})$/.exec(body['model']);
    if (failure !== null) {
      sendJson(response, Number(failure[1]), { error: { message: `mock upstream embeddings error ${failure[1]}`, type: 'server_error' } });
      return;
    }
    const data = inputs.map((_value, index) => {
      const vector = mockEmbedding(index);
      // The openai client asks for base64 (little-endian float32) unless told otherwise.
      const embedding = body['encoding_format'] === 'base64' ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector;
      return { object: 'embedding', index, embedding };
    });
    const tokens = inputs.length * MOCK_EMBEDDING_TOKENS_PER_INPUT;
    sendJson(response, 200, { object: 'list', data, model: body['model'], usage: { prompt_tokens: tokens, total_tokens: tokens } });
  };
}

/** The output items of a native answer: a function call when tools were given, else a message. */
function outputOf(body: Record<string, unknown>): Record<string, unknown>[] {
  const tools = Array.isArray(body['tools']) ? (body['tools'] as { name?: unknown }[]) : [];
  const tool = tools[0];
  if (tool !== undefined) {
    const name = typeof tool.name === 'string' ? tool.name : 'tool';
    return [
      { id: 'fc_native_1', type: 'function_call', status: 'completed', arguments: MOCK_WEATHER_ARGUMENTS, call_id: 'call_native_1', name },
    ];
  }
  const part = { type: 'output_text', annotations: [], logprobs: [], text: MOCK_CONTENT };
  return [{ id: 'msg_native_1', type: 'message', status: 'completed', content: [part], role: 'assistant' }];
}

function nativeResponse(body: Record<string, unknown>, status: string, output: unknown[], usage: unknown): Record<string, unknown> {
  return {
    id: 'resp_native_1',
    object: 'response',
    created_at: 1700000000,
    status,
    error: null,
    incomplete_details: null,
    instructions: body['instructions'] ?? null,
    model: body['model'],
    output,
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: body['tools'] ?? [],
    temperature: null,
    top_p: null,
    usage,
  };
}

/** The event sequence OpenAI streams for one output item (a message or a function call). */
function itemEvents(item: Record<string, unknown>): Record<string, unknown>[] {
  if (item['type'] === 'function_call') {
    const opened = { ...item, status: 'in_progress', arguments: '' };
    return [
      { type: 'response.output_item.added', output_index: 0, item: opened },
      { type: 'response.function_call_arguments.delta', item_id: item['id'], output_index: 0, delta: item['arguments'] },
      {
        type: 'response.function_call_arguments.done',
        item_id: item['id'],
        output_index: 0,
        arguments: item['arguments'],
        name: item['name'],
      },
      { type: 'response.output_item.done', output_index: 0, item },
    ];
  }
  const ids = { item_id: item['id'], output_index: 0, content_index: 0 };
  const part = { type: 'output_text', annotations: [], logprobs: [], text: '' };
  const words = MOCK_CONTENT.split(' ');
  return [
    { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress', content: [] } },
    { type: 'response.content_part.added', ...ids, part },
    ...words.map((word, index) => ({ type: 'response.output_text.delta', ...ids, delta: index === 0 ? word : ` ${word}`, logprobs: [] })),
    { type: 'response.output_text.done', ...ids, text: MOCK_CONTENT, logprobs: [] },
    { type: 'response.content_part.done', ...ids, part: { ...part, text: MOCK_CONTENT } },
    { type: 'response.output_item.done', output_index: 0, item },
  ];
}

/** OpenAI's native `POST /responses`, JSON or SSE (`event: X` + `data:` with `sequence_number`); model `error-<status>` fails. */
export function responsesHandler(): MockRouteHandler {
  return (request, response) => {
    const body = fields(request);
    if (typeof body['model'] !== 'string') {
      sendJson(response, 400, { error: { message: 'mock upstream: model is required', type: 'invalid_request_error' } });
      return;
    }
    const failure = /^error-(\d{3})$/.exec(body['model']);
    if (failure !== null) {
      sendJson(response, Number(failure[1]), { error: { message: `mock upstream responses error ${failure[1]}`, type: 'server_error' } });
      return;
    }
    const output = outputOf(body);
    if (body['stream'] !== true) {
      sendJson(response, 200, nativeResponse(body, 'completed', output, MOCK_RESPONSES_USAGE));
      return;
    }
    const started = nativeResponse(body, 'in_progress', [], null);
    const events = [
      { type: 'response.created', response: started },
      { type: 'response.in_progress', response: started },
      ...output.flatMap(itemEvents),
      { type: 'response.completed', response: nativeResponse(body, 'completed', output, MOCK_RESPONSES_USAGE) },
    ];
    response.writeHead(200, { 'Content-Type': 'text/event-stream', 'Cache-Control': 'no-cache' });
    response.end(
      events
        .map((event, index) => `event: ${String(event.type)}\ndata: ${JSON.stringify({ ...event, sequence_number: index })}\n\n`)
        .join(''),
    );
  };
}

/** OpenAI's `POST /chat/completions` on a custom path (e.g. Gemini's `/v1beta/openai/...`). */
export function chatHandler(): MockRouteHandler {
  let counter = 0;
  return (request, response) => {
    const chat = readChatRequest(request.body);
    if (chat === undefined) {
      sendJson(response, 400, { error: { message: 'mock upstream: model must be a string', type: 'invalid_request_error' } });
      return;
    }
    counter += 1;
    if (!chat.stream) {
      response.writeHead(200, { 'Content-Type': 'application/json' });
      response.end(completionJson(chat, counter));
      return;
    }
    response.writeHead(200, { 'Content-Type': 'text/event-stream' });
    response.end(streamFrames({ chat, counter, chunkCount: 3, toolCall: undefined }).join(''));
  };
}

export interface GeminiModel {
  name: string;
  supportedGenerationMethods?: string[];
}

/** Gemini's native `GET /v1beta/models`, `pageSize` models per page with `nextPageToken`. */
export function geminiModelsHandler(models: GeminiModel[], pageSize: number): MockRouteHandler {
  return (request, response) => {
    const query = new URLSearchParams(request.query);
    const start = Number(query.get('pageToken') ?? '0');
    const page = models.slice(start, start + pageSize);
    const next = start + pageSize < models.length ? { nextPageToken: String(start + pageSize) } : {};
    sendJson(response, 200, { models: page.map((model) => ({ version: '001', displayName: model.name, ...model })), ...next });
  };
}

/** The usage a legacy completion reports (prompt and completion tokens). */
export const MOCK_COMPLETION_USAGE = { prompt_tokens: 9, completion_tokens: 4, total_tokens: 13 };
/** The usage an image answer reports (gpt-image-1's shape). */
export const MOCK_IMAGE_USAGE = {
  input_tokens: 20,
  input_tokens_details: { text_tokens: 20, image_tokens: 0 },
  output_tokens: 30,
  total_tokens: 50,
};
/** The base64 bytes of every mock image. */
export const MOCK_IMAGE_B64 = Buffer.from('mock image bytes').toString('base64');

/** A failure for model `error-<status>`, in OpenAI's error shape; true when it answered. */
function failedFor(model: unknown, response: ServerResponse): boolean {
  const failure = typeof model === 'string' ? /^error-(\d{3})$/.exec(model) : null;
  if (failure === null) return false;
  const status = Number(failure[1]);
  const headers =
    status === 429 ? { 'Content-Type': 'application/json', 'retry-after-ms': '1500' } : { 'Content-Type': 'application/json' };
  response.writeHead(status, headers);
  response.end(JSON.stringify({ error: { message: `mock upstream error ${status}`, type: 'server_error', param: null, code: null } }));
  return true;
}

/** OpenAI's legacy `POST /completions`: JSON, or `text_completion` chunks (a usage chunk when asked); `error-<status>` fails. */
export function completionsHandler(): MockRouteHandler {
  let counter = 0;
  return (request, response) => {
    const body = fields(request);
    if (typeof body['model'] !== 'string' || body['prompt'] === undefined) {
      sendJson(response, 400, { error: { message: 'mock upstream: model and prompt are required', type: 'invalid_request_error' } });
      return;
    }
    if (failedFor(body['model'], response)) return;
    counter += 1;
    const head = { id: `cmpl-mock-${counter}`, object: 'text_completion', created: 1700000000, model: body['model'] };
    if (body['stream'] !== true) {
      const choice = { text: MOCK_CONTENT, index: 0, logprobs: null, finish_reason: 'stop' };
      sendJson(response, 200, { ...head, choices: [choice], usage: MOCK_COMPLETION_USAGE });
      return;
    }
    const words = MOCK_CONTENT.split(' ');
    const chunks: unknown[] = words.map((word, index) => ({
      ...head,
      choices: [
        { text: index === 0 ? word : ` ${word}`, index: 0, logprobs: null, finish_reason: index === words.length - 1 ? 'stop' : null },
      ],
    }));
    const options = body['stream_options'] as { include_usage?: unknown } | undefined;
    if (options?.include_usage === true) chunks.push({ ...head, choices: [], usage: MOCK_COMPLETION_USAGE });
    response.writeHead(200, { 'Content-Type': 'text/event-stream' });
    response.end(`${chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('')}data: [DONE]\n\n`);
  };
}

/** OpenAI's `POST /moderations`: one result per input, flagged when it contains "kill"; the model defaults like OpenAI's. */
export function moderationsHandler(): MockRouteHandler {
  return (request, response) => {
    const body = fields(request);
    if (failedFor(body['model'], response)) return;
    const inputs = Array.isArray(body['input']) ? body['input'] : [body['input']];
    const results = inputs.map((input) => {
      const flagged = typeof input === 'string' && input.includes('kill');
      return { flagged, categories: { violence: flagged }, category_scores: { violence: flagged ? 0.9 : 0.01 } };
    });
    sendJson(response, 200, { id: 'modr-mock-1', model: body['model'] ?? 'omni-moderation-latest', results });
  };
}

/**
 * OpenAI's `POST /images/generations`, `/images/edits` and `/images/variations`: one base64
 * image with gpt-image-1's usage, or its event stream with `stream: true`; every request is pushed to `received` (multipart bodies
 * intact); model `error-<status>` fails.
 */
export function imagesHandler(received: MockRequest[]): MockRouteHandler {
  return (request, response) => {
    received.push(request);
    const json = fields(request);
    const multipartModel = /name="model"\r\n\r\n([^\r]*)\r\n/.exec(request.raw.toString('latin1'))?.[1];
    if (failedFor(json['model'] ?? multipartModel, response)) return;
    const multipartStream = /name="stream"\r\n\r\ntrue\r\n/.test(request.raw.toString('latin1'));
    if (json['stream'] !== true && !multipartStream) {
      sendJson(response, 200, { created: 1700000000, data: [{ b64_json: MOCK_IMAGE_B64 }], usage: MOCK_IMAGE_USAGE });
      return;
    }
    // gpt-image-1's stream: a partial image, then the completed one with the usage.
    const prefix = request.path === '/images/generations' ? 'image_generation' : 'image_edit';
    const image = {
      b64_json: MOCK_IMAGE_B64,
      created_at: 1700000000,
      size: '1024x1024',
      quality: 'low',
      background: 'opaque',
      output_format: 'png',
    };
    const events = [
      { type: `${prefix}.partial_image`, ...image, partial_image_index: 0 },
      { type: `${prefix}.completed`, ...image, usage: MOCK_IMAGE_USAGE },
    ];
    response.writeHead(200, { 'Content-Type': 'text/event-stream' });
    response.end(events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join(''));
  };
}
