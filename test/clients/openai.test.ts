import OpenAI, { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { Storage } from '../../src/storage/storage.ts';
import { expectClientError, openAIClient, rejectionOf } from '../support/clients.ts';
import { type GatewayProcess, MASTER_KEY, startGateway, UPSTREAM_KEY } from '../support/gateway-process.ts';
import {
  completionsHandler,
  imagesHandler,
  MOCK_COMPLETION_USAGE,
  MOCK_IMAGE_B64,
  MOCK_IMAGE_USAGE,
  moderationsHandler,
} from '../support/mock-openai-extras.ts';
import { MOCK_CONTENT, type MockRequest, type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { createGatewayDatabase, type GatewayDatabase, usageRecordOf } from '../support/storage.ts';
import { decodeForm, sendJson } from '../support/upstream.ts';

// The official openai Node client (pinned, v6) through the built gateway against an
// OpenAI-wire mock upstream, on the routes it calls besides chat: models.retrieve, legacy
// completions, moderations, images (JSON and multipart), and the file and batch operations,
// under the same routing, rate limits, budgets and usage records as every model endpoint.

const models = ['gpt-3.5-turbo-instruct', 'omni-moderation-latest', 'gpt-image-1', 'dall-e-2', 'meta-llama/Llama-3-8b', 'error-500'];

const configYaml = `
pricing:
  gpt-3.5-turbo-instruct: { input_per_mtok: 1.5, output_per_mtok: 2 }
  gpt-image-1: { input_per_mtok: 20000, output_per_mtok: 20000 }
budgets:
  user_paths:
    - path: /capped
      limits: [{ period: daily, amount: 1 }]
virtual_models:
  - name: instruct-pool
    strategy: failover
    targets:
      - { provider: openai, model: error-500 }
      - { provider: openai-b, model: gpt-3.5-turbo-instruct }
  - name: claude-only
    strategy: failover
    targets:
      - { provider: anthropic, model: claude-3-haiku }
rate_limits:
  user_paths:
    - path: /limited
      limits: [{ period: minute, max_requests: 1 }]
    - path: /token-limited
      limits: [{ period: minute, max_tokens: 10 }]
`;

/** A client whose requests carry a user path. */
function clientOn(gateway: GatewayProcess, userPath: string): OpenAI {
  return new OpenAI({
    baseURL: `${gateway.url}/v1`,
    apiKey: MASTER_KEY,
    maxRetries: 0,
    timeout: 10_000,
    defaultHeaders: { 'x-user-path': userPath },
  });
}

/** Files and batch operations on the mock: list (echoing its query), delete, cancel. */
function serveFilesAndBatches(mock: MockUpstream, calls: MockRequest[]): void {
  const file = {
    id: 'file-1',
    object: 'file',
    bytes: 3,
    created_at: 1700000000,
    filename: 'a.jsonl',
    purpose: 'batch',
    status: 'processed',
  };
  mock.route('GET', '/files', (request, response) => {
    calls.push(request);
    sendJson(response, 200, { object: 'list', data: [file], first_id: 'file-1', last_id: 'file-1', has_more: false });
  });
  mock.route('DELETE', '/files/*', (request, response) => {
    calls.push(request);
    sendJson(response, 200, { id: request.path.split('/')[2], object: 'file', deleted: true });
  });
  mock.route('POST', '/batches/*', (request, response) => {
    calls.push(request);
    const batch = { id: request.path.split('/')[2], object: 'batch', endpoint: '/v1/chat/completions', input_file_id: 'file-1' };
    sendJson(response, 200, { ...batch, completion_window: '24h', status: 'cancelling', created_at: 1700000000, errors: null });
  });
}

describe('the openai client on the routes besides chat', () => {
  let mock: MockUpstream;
  let database: GatewayDatabase;
  let gateway: GatewayProcess;
  let storage: Storage;
  let client: OpenAI;
  const images: MockRequest[] = [];
  const resourceCalls: MockRequest[] = [];

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.route('POST', '/completions', completionsHandler());
    mock.route('POST', '/moderations', moderationsHandler());
    mock.route('POST', '/images/*', imagesHandler(images));
    serveFilesAndBatches(mock, resourceCalls);
    database = await createGatewayDatabase('sqlite');
    const env = {
      MASTER_KEY,
      OPENAI_API_KEY: UPSTREAM_KEY,
      OPENAI_BASE_URL: mock.url,
      OPENAI_MODELS: models.join(','),
      OPENAI_B_API_KEY: UPSTREAM_KEY,
      OPENAI_B_BASE_URL: mock.url,
      OPENAI_B_MODELS: 'gpt-3.5-turbo-instruct',
      ANTHROPIC_API_KEY: UPSTREAM_KEY,
      ANTHROPIC_BASE_URL: mock.url,
      ANTHROPIC_MODELS: 'claude-3-haiku',
    };
    gateway = await startGateway({ env, configYaml, startTimeoutMs: 60_000 });
    storage = await database.open(gateway);
    client = openAIClient(gateway);
  });

  afterAll(async () => {
    await storage?.close();
    await gateway?.stop();
    await mock?.close();
    await database?.dispose();
  });

  describe('models.retrieve', () => {
    it('finds <instance>/<model>, with the slash raw or percent-encoded', async () => {
      // The client encodes the id as one path segment (openai%2Fgpt-image-1).
      const model = await client.models.retrieve('openai/gpt-image-1');
      expect(model).toMatchObject({ id: 'openai/gpt-image-1', object: 'model', owned_by: 'openai' });
      expect(model.created).toBeGreaterThan(0);
      const raw = await client.get<OpenAI.Models.Model>('/models/openai/gpt-image-1');
      expect(raw).toMatchObject({ id: 'openai/gpt-image-1', object: 'model', owned_by: 'openai' });
    });

    it('finds a bare id, one that itself contains a slash, and a virtual model', async () => {
      expect(await client.models.retrieve('dall-e-2')).toMatchObject({ id: 'dall-e-2', object: 'model', owned_by: 'openai' });
      expect(await client.models.retrieve('meta-llama/Llama-3-8b')).toMatchObject({ id: 'meta-llama/Llama-3-8b', owned_by: 'openai' });
      expect(await client.models.retrieve('openai-b/gpt-3.5-turbo-instruct')).toMatchObject({ owned_by: 'openai-b' });
      const virtual = await client.models.retrieve('instruct-pool');
      expect(virtual).toMatchObject({ id: 'instruct-pool', object: 'model', owned_by: 'virtual' });
    });

    it('answers an unknown model with 404 model_not_found', async () => {
      for (const id of ['no-such-model', 'openai/no-such-model', 'openai-b/dall-e-2']) {
        const thrown = await rejectionOf(client.models.retrieve(id));
        const error = expectClientError(thrown, { status: 404, type: 'not_found_error', code: 'model_not_found' });
        expect(error.message).toContain(id);
      }
    });
  });

  describe('completions (legacy)', () => {
    it('answers JSON routed to the bare model id, and records its usage and endpoint', async () => {
      const completion = await client.completions.create({ model: 'openai/gpt-3.5-turbo-instruct', prompt: 'Say hello', max_tokens: 5 });
      expect(completion.choices[0]?.text).toBe(MOCK_CONTENT);
      expect(completion.usage).toEqual(MOCK_COMPLETION_USAGE);
      expect((completion as unknown as { provider: string }).provider).toBe('openai');
      const sent = mock.requests.filter((recorded) => recorded.path === '/v1/completions').at(-1);
      expect(sent?.body).toEqual({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say hello', max_tokens: 5 });
      expect(sent?.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
      const record = await usageRecordOf(storage, completion._request_id as string);
      expect(record).toMatchObject({ endpoint: '/v1/completions', provider: 'openai', model: 'gpt-3.5-turbo-instruct', status: 200 });
      expect(record).toMatchObject({ promptTokens: 9, completionTokens: 4, totalTokens: 13, stream: false });
      expect(record.costUsd).toBeCloseTo((9 * 1.5 + 4 * 2) / 1_000_000, 12);
    });

    it('streams text_completion chunks, and meters the stream with the usage it asked the upstream for', async () => {
      const { data: stream, request_id: requestId } = await client.completions
        .create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say hello', stream: true })
        .withResponse();
      const chunks: OpenAI.Completions.Completion[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks.map((chunk) => chunk.choices[0]?.text ?? '').join('')).toBe(MOCK_CONTENT);
      expect(chunks.every((chunk) => chunk.object === 'text_completion' && chunk.usage === undefined)).toBe(true);
      const sent = mock.requests.filter((recorded) => recorded.path === '/v1/completions').at(-1);
      expect((sent?.body as Record<string, unknown>)['stream_options']).toEqual({ include_usage: true });
      const record = await usageRecordOf(storage, requestId as string);
      expect(record).toMatchObject({ endpoint: '/v1/completions', stream: true, promptTokens: 9, completionTokens: 4, status: 200 });
    });

    it('shows the usage chunk to a client that asked for it', async () => {
      const stream = await client.completions.create({
        model: 'gpt-3.5-turbo-instruct',
        prompt: 'Say hello',
        stream: true,
        stream_options: { include_usage: true },
      });
      const chunks: OpenAI.Completions.Completion[] = [];
      for await (const chunk of stream) chunks.push(chunk);
      expect(chunks.at(-1)?.usage).toEqual(MOCK_COMPLETION_USAGE);
    });

    it('fails a virtual model over to its next target on an upstream 500', async () => {
      const completion = await client.completions.create({ model: 'instruct-pool', prompt: 'Say hello' });
      expect((completion as unknown as { provider: string }).provider).toBe('openai-b');
      const sent = mock.requests.filter((recorded) => recorded.path === '/v1/completions').slice(-2);
      expect(sent.map((recorded) => (recorded.body as Record<string, unknown>)['model'])).toEqual(['error-500', 'gpt-3.5-turbo-instruct']);
    });

    it('refuses a model on an instance that does not speak OpenAI wire with a clear 400', async () => {
      const before = mock.requests.length;
      for (const model of ['anthropic/claude-3-haiku', 'claude-only']) {
        const thrown = await rejectionOf(client.completions.create({ model, prompt: 'Say hello' }));
        const error = expectClientError(thrown, { status: 400, type: 'invalid_request_error', code: 'unsupported_endpoint' });
        expect(error.message).toBe('provider instance "anthropic" (type anthropic) cannot serve /v1/completions');
      }
      expect(mock.requests.length).toBe(before);
    });

    it('counts tokens against a token limit once the usage is known', async () => {
      const limited = clientOn(gateway, '/token-limited');
      await limited.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say hello' });
      const thrown = await rejectionOf(limited.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say hello' }));
      const error = expectClientError(thrown, {
        status: 429,
        type: 'rate_limit_error',
        provider: 'ratelimit',
        code: 'rate_limit_exceeded',
      });
      expect(error.message).toBe('rate limit exceeded for /token-limited: minute token limit of 10 reached');
    });
  });

  describe('moderations', () => {
    it('classifies with a model, and without one on the default instance (the upstream default applies)', async () => {
      const moderation = await client.moderations.create({ model: 'omni-moderation-latest', input: ['hello', 'kill it'] });
      expect(moderation.results.map((result) => result.flagged)).toEqual([false, true]);
      const bare = await client.moderations.create({ input: 'hello' });
      expect(bare.model).toBe('omni-moderation-latest');
      const sent = mock.requests.filter((recorded) => recorded.path === '/v1/moderations').map((recorded) => recorded.body);
      expect(sent.slice(-2)).toEqual([{ model: 'omni-moderation-latest', input: ['hello', 'kill it'] }, { input: 'hello' }]);
      const record = await usageRecordOf(storage, bare._request_id as string);
      expect(record).toMatchObject({ endpoint: '/v1/moderations', provider: 'openai', model: 'default', status: 200 });
    });
  });

  describe('images', () => {
    it('generates an image as JSON and records the usage gpt-image-1 reports', async () => {
      const image = await client.images.generate({ model: 'gpt-image-1', prompt: 'a red cube', size: '1024x1024' });
      expect(image.data?.[0]?.b64_json).toBe(MOCK_IMAGE_B64);
      expect(image.usage).toEqual(MOCK_IMAGE_USAGE);
      expect(images.at(-1)?.body).toEqual({ model: 'gpt-image-1', prompt: 'a red cube', size: '1024x1024' });
      const record = await usageRecordOf(storage, image._request_id as string);
      expect(record).toMatchObject({ endpoint: '/v1/images/generations', model: 'gpt-image-1', promptTokens: 20, completionTokens: 30 });
    });

    it('relays an edit as a valid multipart form with the target model, the files intact', async () => {
      const png = Buffer.concat([
        Buffer.from([0x89, 0x50, 0x4e, 0x47]),
        Buffer.from('\r\n--boundary-lookalike\r\n'),
        Buffer.alloc(5000, 7),
      ]);
      const image = await client.images.edit({
        model: 'openai/gpt-image-1',
        image: await toFile(png, 'cube.png', { type: 'image/png' }),
        prompt: 'make it blue',
      });
      expect(image.data?.[0]?.b64_json).toBe(MOCK_IMAGE_B64);
      const received = images.at(-1) as MockRequest;
      expect(received.path).toBe('/images/edits');
      const form = await decodeForm(received);
      expect(form.get('model')).toBe('gpt-image-1');
      expect(form.get('prompt')).toBe('make it blue');
      const file = form.get('image') as File;
      expect(file.name).toBe('cube.png');
      expect(Buffer.from(await file.arrayBuffer()).equals(png)).toBe(true);
      const record = await usageRecordOf(storage, image._request_id as string);
      expect(record).toMatchObject({ endpoint: '/v1/images/edits', provider: 'openai', model: 'gpt-image-1', totalTokens: 50 });
    });

    it('relays a variation, routed by its model field', async () => {
      const png = Buffer.alloc(2000, 3);
      const image = await client.images.createVariation({
        model: 'dall-e-2',
        image: await toFile(png, 'v.png', { type: 'image/png' }),
        n: 1,
      });
      expect(image.data?.[0]?.b64_json).toBe(MOCK_IMAGE_B64);
      const received = images.at(-1) as MockRequest;
      expect(received.path).toBe('/images/variations');
      const form = await decodeForm(received);
      expect([form.get('model'), form.get('n')]).toEqual(['dall-e-2', '1']);
      expect(Buffer.from(await (form.get('image') as File).arrayBuffer()).equals(png)).toBe(true);
    });

    it('relays an image stream as the upstream sent it and records the usage of its completed event', async () => {
      const { data: stream, request_id: requestId } = await client.images
        .generate({ model: 'gpt-image-1', prompt: 'a red cube', stream: true, partial_images: 1 })
        .withResponse();
      const events: OpenAI.Images.ImageGenStreamEvent[] = [];
      for await (const event of stream) events.push(event);
      expect(events.map((event) => event.type)).toEqual(['image_generation.partial_image', 'image_generation.completed']);
      expect(events.at(-1)).toMatchObject({ b64_json: MOCK_IMAGE_B64, usage: MOCK_IMAGE_USAGE });
      const record = await usageRecordOf(storage, requestId as string);
      expect(record).toMatchObject({
        endpoint: '/v1/images/generations',
        stream: true,
        promptTokens: 20,
        completionTokens: 30,
        status: 200,
      });
    });

    it('applies user-path request limits: the second image on a one-per-minute path gets 429', async () => {
      const limited = clientOn(gateway, '/limited');
      await limited.images.generate({ model: 'gpt-image-1', prompt: 'one' });
      const before = images.length;
      const thrown = await rejectionOf(limited.images.generate({ model: 'gpt-image-1', prompt: 'two' }));
      const error = expectClientError(thrown, {
        status: 429,
        type: 'rate_limit_error',
        provider: 'ratelimit',
        code: 'rate_limit_exceeded',
      });
      expect(error.message).toBe('rate limit exceeded for /limited: minute request limit of 1 reached');
      expect(Number((thrown as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(images.length).toBe(before);
    });
  });

  it('charges the cost to the budget and refuses the next call over it with 429 budget_exceeded', async () => {
    // 50 image tokens at $20,000 per million: $1, the whole daily budget of /capped.
    const capped = clientOn(gateway, '/capped');
    await capped.images.generate({ model: 'gpt-image-1', prompt: 'one' });
    const before = mock.requests.length;
    for (const attempt of [
      () => capped.images.generate({ model: 'gpt-image-1', prompt: 'two' }),
      () => capped.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say hello' }),
      () => capped.moderations.create({ model: 'omni-moderation-latest', input: 'hello' }),
    ]) {
      const thrown = await rejectionOf(attempt());
      expectClientError(thrown, { status: 429, type: 'rate_limit_error', provider: 'budget', code: 'budget_exceeded' });
    }
    expect(mock.requests.length).toBe(before);
  });

  describe('files and batches', () => {
    it('lists files with the query parameters relayed', async () => {
      const page = await client.files.list({ purpose: 'batch', limit: 5 });
      expect(page.data.map((file) => file.id)).toEqual(['file-1']);
      const query = new URLSearchParams(resourceCalls.at(-1)?.query);
      expect([query.get('purpose'), query.get('limit')]).toEqual(['batch', '5']);
    });

    it('deletes a file and cancels a batch', async () => {
      expect(await client.files.delete('file-1')).toMatchObject({ id: 'file-1', deleted: true });
      expect(resourceCalls.at(-1)).toMatchObject({ method: 'DELETE', path: '/files/file-1' });
      const batch = await client.batches.cancel('batch_1');
      expect(batch).toMatchObject({ id: 'batch_1', status: 'cancelling' });
      expect(resourceCalls.at(-1)).toMatchObject({ method: 'POST', path: '/batches/batch_1/cancel' });
    });
  });
});
