import { toFile } from 'openai';
import type OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';

import { adminUsage } from '../support/admin.ts';
import { expectClientError, openAIClient, rejectionOf } from '../support/clients.ts';
import { type GatewayProcess, MASTER_KEY, startGateway, UPSTREAM_KEY } from '../support/gateway-process.ts';
import { bearer, chatBody, listModels, parseJson, rawRequest } from '../support/http.ts';
import { type AzureRecordedRequest, type MockAzure, startMockAzure } from '../support/mock-azure.ts';
import { type MockRealtime, startMockRealtime } from '../support/mock-realtime.ts';
import { MOCK_CONTENT, type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { eventually } from '../support/wait.ts';

// Provider type `azure` against a loopback Azure OpenAI: classic deployment URLs with
// `api-version` and the `api-key` header (instance `az`, model -> deployment map), the v1
// API with an Entra ID bearer token (instance `azv1`), content filter results kept, the
// content filter refusal as a 400 `content_filter`, failover to OpenAI on 429.

const azureKey = 'azure-resource-key';
const entraToken = 'eyJ0eXAiOiJKV1QiLCJhbGciOiJSUzI1NiJ9.entra.token';
const messages = [{ role: 'user' as const, content: 'Say hello' }];

const configYaml = (azure: MockAzure, openai: MockUpstream, realtime: MockRealtime): string => `
providers:
  az:
    type: azure
    base_url: ${azure.url}
    api_key: ${azureKey}
    api_version: 2024-10-21
    deployments:
      gpt-4o: gpt-4o-prod
      text-embedding-3-small: embed-prod
      filtered-model: filtered
      throttled-model: throttled
      cutoff-model: cutoff
      broken-model: broken
      whisper-1: whisper-prod
      tts-1: tts-prod
      dall-e-3: dalle-prod
  azv1:
    type: azure
    base_url: ${azure.url}/openai/v1
    api_key: "Bearer ${entraToken}"
    models: [gpt-4o-prod, throttled]
  azbad:
    type: azure
    base_url: ${azure.url}
    api_key: not-the-key
    models: [gpt-4o-prod]
  azrt:
    type: azure
    base_url: ${realtime.url.replace(/\/v1$/, '')}
    api_key: ${azureKey}
    deployments: { gpt-realtime: rt-prod }
  azrtv1:
    type: azure
    base_url: ${realtime.url.replace(/\/v1$/, '')}/openai/v1
    api_key: ${azureKey}
    models: [rt-prod]
  openai:
    type: openai
    base_url: ${openai.url}
    api_key: ${UPSTREAM_KEY}
virtual_models:
  - name: resilient
    strategy: failover
    targets:
      - { provider: az, model: throttled-model }
      - { provider: openai, model: mock-model }
  - name: resilient-500
    strategy: failover
    targets:
      - { provider: az, model: broken-model }
      - { provider: openai, model: mock-model }
`;

describe('azure provider', () => {
  let azure: MockAzure;
  let openaiMock: MockUpstream;
  let realtime: MockRealtime;
  let gateway: GatewayProcess;
  let client: OpenAI;
  const last = (path: string): AzureRecordedRequest => {
    const found = azure.requests.filter((recorded) => recorded.path === path).at(-1);
    if (found === undefined) throw new Error(`no request to ${path}`);
    return found;
  };

  beforeAll(async () => {
    azure = await startMockAzure({
      apiKey: azureKey,
      entraToken,
      deployments: ['gpt-4o-prod', 'embed-prod', 'whisper-prod', 'tts-prod', 'dalle-prod'],
    });
    openaiMock = await startMockUpstream({ apiKey: UPSTREAM_KEY });
    realtime = await startMockRealtime();
    gateway = await startGateway({ env: { MASTER_KEY }, configYaml: configYaml(azure, openaiMock, realtime) });
    client = openAIClient(gateway);
  });

  afterAll(async () => {
    await gateway?.stop();
    await azure?.close();
    await openaiMock?.close();
    await realtime?.close();
  });

  it('lists the deployments map keys and the configured models', async () => {
    const ids = (await listModels(gateway)).map((model) => model.id);
    expect(ids).toEqual(expect.arrayContaining(['az/gpt-4o', 'az/text-embedding-3-small', 'azv1/gpt-4o-prod', 'resilient']));
  });

  it('sends chat to the deployment URL with api-version and api-key, filter results kept', async () => {
    const completion = await client.chat.completions.create({ model: 'az/gpt-4o', messages });
    expect(completion.choices[0]?.message.content).toBe('Hello from Azure');
    const raw = completion as unknown as Record<string, unknown> & { choices: Array<Record<string, unknown>> };
    expect(raw['prompt_filter_results']).toEqual([expect.objectContaining({ prompt_index: 0 })]);
    expect(raw.choices[0]?.['content_filter_results']).toMatchObject({ violence: { filtered: false, severity: 'safe' } });
    const sent = last('/openai/deployments/gpt-4o-prod/chat/completions');
    expect(sent.query.get('api-version')).toBe('2024-10-21');
    expect(sent.headers['api-key']).toBe(azureKey);
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body['model']).toBe('gpt-4o-prod');
  });

  it('streams chat, the prompt filter chunk included, with usage when asked', async () => {
    const stream = await client.chat.completions.create({
      model: 'az/gpt-4o',
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = '';
    let usage: OpenAI.CompletionUsage | null | undefined;
    const finishes: Array<string | null> = [];
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      finishes.push(chunk.choices[0]?.finish_reason ?? null);
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe('Hello from Azure');
    expect(finishes).toContain('stop');
    expect(usage?.total_tokens).toBe(17);
    expect(last('/openai/deployments/gpt-4o-prod/chat/completions').body['stream']).toBe(true);
  });

  it('passes tool calls through', async () => {
    const completion = await client.chat.completions.create({
      model: 'az/gpt-4o',
      messages,
      tools: [
        { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } },
      ],
    });
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls');
    expect(completion.choices[0]?.message.tool_calls?.[0]).toMatchObject({
      function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
    });
    expect(last('/openai/deployments/gpt-4o-prod/chat/completions').body['tools']).toHaveLength(1);
  });

  it('sends embeddings to the embedding deployment', async () => {
    const embedded = await client.embeddings.create({ model: 'az/text-embedding-3-small', input: 'hi', encoding_format: 'float' });
    expect(embedded.data[0]?.embedding).toHaveLength(3);
    const sent = last('/openai/deployments/embed-prod/embeddings');
    expect(sent.query.get('api-version')).toBe('2024-10-21');
    expect(sent.headers['api-key']).toBe(azureKey);
  });

  it('serves the v1 API with an Entra ID bearer token, the deployment as the model', async () => {
    const completion = await client.chat.completions.create({ model: 'azv1/gpt-4o-prod', messages });
    expect(completion.choices[0]?.message.content).toBe('Hello from Azure');
    const sent = last('/openai/v1/chat/completions');
    expect(sent.headers.authorization).toBe(`Bearer ${entraToken}`);
    expect(sent.headers['api-key']).toBeUndefined();
    expect(sent.query.has('api-version')).toBe(false);
    expect(sent.body['model']).toBe('gpt-4o-prod');
  });

  it('relays the Responses API to /openai/v1/responses', async () => {
    const response = await client.responses.create({ model: 'azv1/gpt-4o-prod', input: 'hi' });
    expect(response.output_text).toBe('Hello from Azure responses');
    expect(last('/openai/v1/responses').body['model']).toBe('gpt-4o-prod');
  });

  it('serves the Responses API of a classic instance at /openai/responses, the deployment in the body', async () => {
    const response = await client.responses.create({ model: 'az/gpt-4o', input: 'hi' });
    expect(response.output_text).toBe('Hello from Azure responses');
    const sent = last('/openai/responses');
    // Azure refuses the Responses API before 2025-03-01-preview: the instance's GA version is not used here.
    expect(sent.query.get('api-version')).toBe('2025-04-01-preview');
    expect(sent.body['model']).toBe('gpt-4o-prod');
  });

  it('sends audio and images to their deployments with api-version', async () => {
    const file = await toFile(Buffer.from('RIFF....WAVEfmt '), 'hello.wav', { type: 'audio/wav' });
    const transcription = await client.audio.transcriptions.create({ file, model: 'az/whisper-1' });
    expect(transcription.text).toBe('Hello from Azure audio');
    const transcribed = last('/openai/deployments/whisper-prod/audio/transcriptions');
    expect([transcribed.query.get('api-version'), transcribed.headers['api-key']]).toEqual(['2024-10-21', azureKey]);
    expect(String(transcribed.headers['content-type'])).toMatch(/^multipart\/form-data/);
    const speech = await client.audio.speech.create({ model: 'az/tts-1', input: 'Hello', voice: 'alloy' });
    expect(Buffer.from(await speech.arrayBuffer())).toEqual(Buffer.from([0xff, 0xf3, 0x44, 0xc4]));
    expect(last('/openai/deployments/tts-prod/audio/speech').query.get('api-version')).toBe('2024-10-21');
    const images = await client.images.generate({ model: 'az/dall-e-3', prompt: 'a lighthouse' });
    expect(images.data?.[0]).toMatchObject({
      revised_prompt: 'A watercolor lighthouse at dawn.',
      content_filter_results: expect.any(Object),
    });
    expect(last('/openai/deployments/dalle-prod/images/generations').body['model']).toBe('dalle-prod');
  });

  it('sends files and batches to /openai/files and /openai/batches with api-version', async () => {
    const upload = await toFile(Buffer.from('{"custom_id":"1"}\n'), 'requests.jsonl', { type: 'application/jsonl' });
    const created = await client.files.create({ file: upload, purpose: 'batch' });
    expect(created.id).toBe('file-azure0001');
    expect(last('/openai/files').query.get('api-version')).toBe('2024-10-21');
    expect((await client.files.retrieve('file-azure0001')).filename).toBe('requests.jsonl');
    expect(last('/openai/files/file-azure0001').headers['api-key']).toBe(azureKey);
    const batch = await client.batches.create({ input_file_id: created.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(batch.id).toBe('batch_azure0001');
    expect(last('/openai/batches').query.get('api-version')).toBe('2024-10-21');
    await client.batches.cancel('batch_azure0001');
    expect(last('/openai/batches/batch_azure0001/cancel').method).toBe('POST');
  });

  it('relays the passthrough under the resource, a chat path to its deployment', async () => {
    const reply = await rawRequest(`${gateway.url}/p/az/chat/completions`, { headers: bearer(), body: chatBody('gpt-4o') });
    expect(reply.status).toBe(200);
    expect(parseJson(reply.text)['prompt_filter_results']).toHaveLength(1);
    const sent = last('/openai/deployments/gpt-4o-prod/chat/completions');
    expect([sent.query.get('api-version'), sent.headers['api-key'], sent.headers.authorization]).toEqual([
      '2024-10-21',
      azureKey,
      undefined,
    ]);
  });

  it('opens realtime sessions on the deployment: classic with a preview api-version, v1 with model', async () => {
    const open = async (model: string): Promise<void> => {
      const socket = new WebSocket(`ws://127.0.0.1:${gateway.port}/v1/realtime?model=${model}`, { headers: bearer() });
      const first = await new Promise<string>((resolve, reject) => {
        socket.once('message', (data: Buffer) => resolve(data.toString('utf8')));
        socket.once('error', reject);
      });
      expect(JSON.parse(first)).toMatchObject({ type: 'session.created' });
      socket.close();
    };
    await open('azrt/gpt-realtime');
    const classic = realtime.connections.at(-1);
    expect(classic?.url.split('?')[0]).toBe('/openai/realtime');
    expect(Object.fromEntries(classic?.query ?? [])).toEqual({ deployment: 'rt-prod', 'api-version': '2025-04-01-preview' });
    expect([classic?.headers['api-key'], classic?.headers.authorization]).toEqual([azureKey, undefined]);
    await open('azrtv1/rt-prod');
    expect(realtime.connections.at(-1)?.url).toBe('/openai/v1/realtime?model=rt-prod');
  });

  it("maps the content filter refusal to a 400 with code content_filter and Azure's message", async () => {
    const thrown = await rejectionOf(client.chat.completions.create({ model: 'az/filtered-model', messages }));
    const error = expectClientError(thrown, { status: 400, type: 'invalid_request_error', code: 'content_filter', provider: 'az' });
    expect(error.message).toMatch(/content management policy/);
  });

  it("answers a wrong key with 401 authentication_error keeping Azure's message", async () => {
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, { headers: bearer(), body: chatBody('azbad/gpt-4o-prod') });
    expect(reply.status).toBe(401);
    expect(parseJson(reply.text)['error']).toMatchObject({ type: 'authentication_error', provider: 'azbad' });
    expect(reply.text).toContain('invalid subscription key');
  });

  it('fails over from a throttled Azure deployment (429) to OpenAI', async () => {
    const completion = await client.chat.completions.create({ model: 'resilient', messages });
    expect(completion.choices[0]?.message.content).toBe(MOCK_CONTENT);
    expect((completion as unknown as { provider?: string }).provider).toBe('openai');
    expect(azure.requests.some((recorded) => recorded.path === '/openai/deployments/throttled/chat/completions')).toBe(true);
  });

  it('fails over from an Azure 500 to OpenAI, streaming too', async () => {
    const stream = await client.chat.completions.create({ model: 'resilient-500', messages, stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('tok0 tok1 tok2 tok3 tok4 '); // the OpenAI mock's stream
    expect(azure.requests.some((recorded) => recorded.path === '/openai/deployments/broken/chat/completions')).toBe(true);
  });

  it('ends a stream cut mid-way with an error event, never [DONE]', async () => {
    const reply = await rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: bearer(),
      body: chatBody('az/cutoff-model', { stream: true }),
    });
    expect(reply.status).toBe(200);
    const frames = reply.text.split('\n\n').filter((frame) => frame !== '');
    expect(frames.at(-1)).not.toBe('data: [DONE]');
    expect(parseJson(frames.at(-1)?.slice('data: '.length) ?? '')['error']).toMatchObject({ type: 'provider_error', provider: 'az' });
    expect(reply.text).toContain('"content":"Hello"');
  });

  it('records usage against the executed instance, priced by the model id', async () => {
    const rows = await eventually(async () => {
      const found = await adminUsage(gateway, { group_by: 'provider' });
      return found.has('az') && (found.get('openai')?.requests ?? 0) >= 2 ? found : undefined;
    }, 'usage rows of az and openai');
    expect(rows.get('openai')?.requests).toBeGreaterThanOrEqual(2);
    // az also served unpriced models (its group's cost is then null, issue 16); gpt-4o, asked
    // through its deployment, is priced by the model id.
    expect(rows.get('az')?.unpriced_requests).toBeLessThan(rows.get('az')?.requests ?? 0);
    const models = await adminUsage(gateway, { group_by: 'model' });
    expect(models.get('gpt-4o')?.cost_usd, JSON.stringify([...models])).toBeGreaterThan(0);
  });
});
