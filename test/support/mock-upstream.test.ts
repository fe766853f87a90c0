import type { IncomingHttpHeaders } from 'node:http';

import { request } from 'undici';
import { afterAll, afterEach, beforeAll, expect, test } from 'vitest';

import { MOCK_COMPLETION_TOKENS, MOCK_CONTENT, MOCK_PROMPT_TOKENS, startMockUpstream } from './mock-upstream.ts';
import type { MockUpstream } from './mock-upstream.ts';

interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

interface ChunkShape {
  id: string;
  object: string;
  model: string;
  system_fingerprint: string;
  choices: {
    index: number;
    delta: { role?: string; content?: string | null; tool_calls?: unknown[] };
    finish_reason: string | null;
  }[];
  usage?: { prompt_tokens: number; completion_tokens: number; total_tokens: number } | null;
}

let mock: MockUpstream;

beforeAll(async () => {
  mock = await startMockUpstream();
});

afterEach(() => {
  mock.reset();
});

afterAll(async () => {
  await mock.close();
});

async function call(path: string, body?: unknown, headers: Record<string, string> = {}, base = mock.url): Promise<Reply> {
  const response = await request(`${base}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return {
    status: response.statusCode,
    headers: response.headers,
    text: await response.body.text(),
  };
}

function chat(model: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model, messages: [{ role: 'user', content: 'Say hello' }], ...extra };
}

/** The JSON chunks of an SSE body; asserts that it ends with `data: [DONE]`. */
function parseStream(text: string): ChunkShape[] {
  const frames = text.split('\n\n').filter((frame) => frame !== '');
  expect(frames.every((frame) => frame.startsWith('data: '))).toBe(true);
  expect(frames.at(-1)).toBe('data: [DONE]');
  return frames.slice(0, -1).map((frame) => JSON.parse(frame.slice(6)) as ChunkShape);
}

test('lists models with and without the /v1 prefix', async () => {
  const expected = {
    object: 'list',
    data: [
      { id: 'mock-model', object: 'model', created: 1700000000, owned_by: 'mock' },
      { id: 'mock-model-2', object: 'model', created: 1700000000, owned_by: 'mock' },
    ],
  };
  const withPrefix = await call('/models');
  expect(withPrefix.status).toBe(200);
  expect(JSON.parse(withPrefix.text)).toEqual(expected);
  const withoutPrefix = await call('/models', undefined, {}, mock.url.slice(0, -3));
  expect(JSON.parse(withoutPrefix.text)).toEqual(expected);
  mock.setModels(['other']);
  const changed = JSON.parse((await call('/models')).text) as { data: { id: string }[] };
  expect(changed.data.map((model) => model.id)).toEqual(['other']);
  mock.setModels(['mock-model', 'mock-model-2']);
});

test('setModelsStatus makes GET /models fail and recover', async () => {
  mock.setModelsStatus(500);
  const failed = await call('/models');
  expect(failed.status).toBe(500);
  expect(JSON.parse(failed.text)).toMatchObject({ error: { type: 'server_error' } });
  mock.setModelsStatus(200);
  expect((await call('/models')).status).toBe(200);
});

test('answers a non-stream chat completion and records the request', async () => {
  const reply = await call('/chat/completions', chat('mock-model'), { authorization: 'Bearer x' });
  expect(reply.status).toBe(200);
  expect(reply.headers['content-type']).toBe('application/json');
  const body = JSON.parse(reply.text) as Record<string, unknown>;
  expect(body).toMatchObject({
    object: 'chat.completion',
    model: 'mock-model',
    system_fingerprint: 'fp_mock',
    choices: [
      {
        index: 0,
        message: { role: 'assistant', content: MOCK_CONTENT },
        logprobs: null,
        finish_reason: 'stop',
      },
    ],
    usage: {
      prompt_tokens: MOCK_PROMPT_TOKENS,
      completion_tokens: MOCK_COMPLETION_TOKENS,
      total_tokens: MOCK_PROMPT_TOKENS + MOCK_COMPLETION_TOKENS,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0, accepted_prediction_tokens: 0 },
    },
  });
  expect(body.id).toMatch(/^chatcmpl-mock-\d+$/);
  expect(typeof body.created).toBe('number');
  await mock.waitFor((requests) => requests[0]?.completed === true);
  const [recorded] = mock.requests;
  expect(recorded).toMatchObject({ method: 'POST', path: '/v1/chat/completions', aborted: false });
  expect(recorded?.headers.authorization).toBe('Bearer x');
  expect(recorded?.body).toEqual(chat('mock-model'));
  expect(recorded?.rawBody).toBe(JSON.stringify(chat('mock-model')));
});

test('streams chunks without usage unless include_usage is set', async () => {
  const reply = await call('/chat/completions', chat('mock-model', { stream: true }));
  expect(reply.headers['content-type']).toBe('text/event-stream');
  const chunks = parseStream(reply.text);
  expect(chunks).toHaveLength(1 + 5 + 1);
  expect(chunks[0]?.choices[0]?.delta).toEqual({ role: 'assistant', content: '' });
  const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
  expect(text).toBe('tok0 tok1 tok2 tok3 tok4 ');
  expect(chunks.at(-1)?.choices[0]).toEqual({
    index: 0,
    delta: {},
    logprobs: null,
    finish_reason: 'stop',
  });
  for (const chunk of chunks) {
    expect(chunk).toMatchObject({ object: 'chat.completion.chunk', model: 'mock-model' });
    expect(chunk.id).toBe(chunks[0]?.id);
    expect('usage' in chunk).toBe(false);
  }
});

test('streams a final usage chunk when include_usage is true', async () => {
  const body = chat('mock-model', { stream: true, stream_options: { include_usage: true } });
  const chunks = parseStream((await call('/chat/completions', body)).text);
  expect(chunks).toHaveLength(1 + 5 + 1 + 1);
  const usageChunk = chunks.at(-1);
  expect(usageChunk?.choices).toEqual([]);
  expect(usageChunk?.usage).toMatchObject({ prompt_tokens: 12, completion_tokens: 5 });
  expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);
  expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('stop');
});

test('magic error models answer in the OpenAI error format', async () => {
  const cases = [
    ['error-500', 500, 'server_error'],
    ['error-503', 503, 'service_unavailable'],
    ['error-429', 429, 'rate_limit_exceeded'],
    ['error-401', 401, 'invalid_api_key'],
    ['error-404', 404, 'model_not_found'],
    ['error-400', 400, 'invalid_request'],
  ] as const;
  for (const [model, status, code] of cases) {
    const reply = await call('/chat/completions', chat(model, { stream: true }));
    expect(reply.status).toBe(status);
    expect(JSON.parse(reply.text)).toEqual({
      error: {
        message: `mock upstream error ${status}`,
        type: expect.any(String),
        param: null,
        code,
      },
    });
    expect(reply.headers['retry-after']).toBe(status === 429 ? '7' : undefined);
  }
});

test('setBehavior and setDefaultBehavior choose errors with custom bodies and headers', async () => {
  const body = { error: { message: 'custom', type: 'x', param: null, code: null } };
  mock.setBehavior('mock-model', { kind: 'error', status: 502, body, headers: { 'x-test': '1' } });
  const custom = await call('/chat/completions', chat('mock-model'));
  expect(custom.status).toBe(502);
  expect(JSON.parse(custom.text)).toEqual(body);
  expect(custom.headers['x-test']).toBe('1');
  mock.setDefaultBehavior({ kind: 'error', status: 418 });
  expect((await call('/chat/completions', chat('anything'))).status).toBe(418);
  mock.reset();
  expect((await call('/chat/completions', chat('mock-model'))).status).toBe(200);
});

test('tool-model and requests with tools answer a tool call', async () => {
  const magic = JSON.parse((await call('/chat/completions', chat('tool-model'))).text) as {
    choices: { message: { tool_calls: unknown[] }; finish_reason: string }[];
  };
  expect(magic.choices[0]?.finish_reason).toBe('tool_calls');
  expect(magic.choices[0]?.message.tool_calls).toEqual([
    {
      id: expect.stringMatching(/^call_mock_/),
      type: 'function',
      function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
    },
  ]);
  const tools = [{ type: 'function', function: { name: 'lookup', parameters: {} } }];
  const viaTools = await call('/chat/completions', chat('mock-model', { tools }));
  expect(viaTools.text).toContain('"name":"lookup"');
  expect(viaTools.text).toContain('"finish_reason":"tool_calls"');
});

test('streams a tool call as deltas whose arguments concatenate', async () => {
  const body = chat('tool-model', { stream: true, stream_options: { include_usage: true } });
  const chunks = parseStream((await call('/chat/completions', body)).text);
  const calls = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []) as {
    id?: string;
    function: { name?: string; arguments: string };
  }[];
  expect(calls[0]?.function.name).toBe('get_weather');
  expect(calls.map((item) => item.function.arguments).join('')).toBe('{"city":"Paris"}');
  expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe('tool_calls');
  expect(chunks.at(-1)?.usage?.completion_tokens).toBe(MOCK_COMPLETION_TOKENS);
});

test('a hanging request is recorded as aborted when the client gives up', async () => {
  const controller = new AbortController();
  const pending = request(`${mock.url}/chat/completions`, {
    method: 'POST',
    body: JSON.stringify(chat('hang')),
    signal: controller.signal,
  });
  await mock.waitFor((requests) => requests[0]?.body !== undefined);
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(mock.requests[0]).toMatchObject({ aborted: false, completed: false });
  controller.abort();
  await expect(pending).rejects.toThrow();
  await mock.waitFor((requests) => requests[0]?.aborted === true);
  expect(mock.requests[0]?.completed).toBe(false);
});

test('a client that leaves a slow stream early is recorded as aborted', async () => {
  const started = Date.now();
  const response = await request(`${mock.url}/chat/completions`, {
    method: 'POST',
    body: JSON.stringify(chat('slow-stream', { stream: true })),
  });
  for await (const chunk of response.body) {
    expect(String(chunk)).toContain('"role":"assistant"');
    break;
  }
  await mock.waitFor((requests) => requests[0]?.aborted === true);
  expect(Date.now() - started).toBeLessThan(1000);
});

test('latency behaviours delay the answer', async () => {
  mock.setBehavior('mock-model', { kind: 'latency', ms: 80 });
  let started = Date.now();
  expect((await call('/chat/completions', chat('mock-model'))).status).toBe(200);
  expect(Date.now() - started).toBeGreaterThanOrEqual(75);
  started = Date.now();
  expect((await call('/chat/completions', chat('slow'))).text).toContain(MOCK_CONTENT);
  expect(Date.now() - started).toBeGreaterThanOrEqual(195);
});

test('unknown routes, invalid JSON and a missing model are errors', async () => {
  const unknown = await call('/embeddings', { input: 'x' });
  expect(unknown.status).toBe(404);
  expect(JSON.parse(unknown.text)).toMatchObject({ error: { param: null } });
  const response = await request(`${mock.url}/chat/completions`, { method: 'POST', body: '{no' });
  expect(response.statusCode).toBe(400);
  expect(await response.body.text()).toContain('invalid JSON');
  expect((await call('/chat/completions', { messages: [] })).status).toBe(400);
});

test('apiKey rejects requests without the right bearer token', async () => {
  const guarded = await startMockUpstream({ apiKey: 'sk-test' });
  try {
    const missing = await call('/models', undefined, {}, guarded.url);
    expect(missing.status).toBe(401);
    expect(JSON.parse(missing.text)).toMatchObject({ error: { code: 'invalid_api_key' } });
    const wrong = await call('/chat/completions', chat('mock-model'), { authorization: 'Bearer x' }, guarded.url);
    expect(wrong.status).toBe(401);
    const right = await call('/models', undefined, { authorization: 'Bearer sk-test' }, guarded.url);
    expect(right.status).toBe(200);
  } finally {
    await guarded.close();
  }
});

test('record: false records nothing; chunk options shape the stream', async () => {
  const quiet = await startMockUpstream({ record: false, chunkCount: 3, chunkDelayMs: 30 });
  try {
    const started = Date.now();
    const response = await request(`${quiet.url}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify(chat('mock-model', { stream: true })),
    });
    let reads = 0;
    let text = '';
    for await (const chunk of response.body) {
      reads += 1;
      text += String(chunk);
    }
    expect(Date.now() - started).toBeGreaterThanOrEqual(4 * 30 - 5);
    expect(reads).toBeGreaterThanOrEqual(4);
    expect(parseStream(text)).toHaveLength(1 + 3 + 1);
    expect(quiet.requests).toHaveLength(0);
  } finally {
    await quiet.close();
  }
});

test('a large stream arrives complete to a slow reader', async () => {
  const large = await startMockUpstream({ chunkCount: 20_000 });
  try {
    const response = await request(`${large.url}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify(chat('mock-model', { stream: true })),
    });
    let text = '';
    for await (const chunk of response.body) {
      text += String(chunk);
      if (text.length < 200_000) await new Promise((resolve) => setTimeout(resolve, 1));
    }
    expect(parseStream(text)).toHaveLength(1 + 20_000 + 1);
  } finally {
    await large.close();
  }
});

test('close() ends hanging requests', async () => {
  const closing = await startMockUpstream();
  const pending = request(`${closing.url}/chat/completions`, {
    method: 'POST',
    body: JSON.stringify(chat('hang')),
  });
  // Settle the promise into a value now: it rejects during close(), before any await below.
  const outcome = pending.then(
    () => 'answered',
    (error: unknown) => error,
  );
  await closing.waitFor((requests) => requests.length === 1);
  const started = Date.now();
  await closing.close();
  expect(await outcome).toBeInstanceOf(Error);
  expect(Date.now() - started).toBeLessThan(1000);
  expect(closing.requests[0]?.aborted).toBe(true);
});
