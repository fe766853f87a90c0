import { randomBytes } from 'node:crypto';

import OpenAI, { toFile } from 'openai';
import { FormData, request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';

import { usageOf } from '../support/admin.ts';
import { expectClientError, openAIClient, rejectionOf } from '../support/clients.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, MASTER_KEY, startGateway, UPSTREAM_KEY } from '../support/gateway-process.ts';
import { bearer } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { decodeForm, sendJson } from '../support/upstream.ts';

// The audio endpoints with the official openai client: speech bytes streamed back with their
// content type, uploads relayed as valid multipart forms with the target's model, answers in
// every response format, usage, upstream errors and rate limits (CONTRACT 4 and 5).

const speechAudio = randomBytes(200_000);
const upload = Buffer.concat([Buffer.from('ID3'), randomBytes(50_000), Buffer.from('\r\n--not-a-boundary\r\n')]);

interface ReceivedUpload {
  path: string;
  authorization: string | undefined;
  fields: Record<string, string>;
  file: Buffer;
  filename: string;
}

describe('audio endpoints', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;
  let client: OpenAI;
  const uploads: ReceivedUpload[] = [];
  let releaseSpeech: (() => void) | null = null;

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.route('POST', '/audio/speech', async (received, response) => {
      const body = received.body as Record<string, unknown>;
      if (body['model'] === 'error-400') return sendJson(response, 400, { error: { message: 'voice is invalid', param: 'voice' } });
      response.writeHead(200, { 'content-type': body['response_format'] === 'wav' ? 'audio/wav' : 'audio/mpeg' });
      response.write(speechAudio.subarray(0, 1000));
      // With `input: "wait"` the rest only comes once the test has seen the first bytes.
      if (body['input'] === 'wait') await new Promise<void>((resolve) => (releaseSpeech = resolve));
      response.end(speechAudio.subarray(1000));
    });
    for (const kind of ['transcriptions', 'translations']) {
      mock.route('POST', `/audio/${kind}`, async (received, response) => {
        const form = await decodeForm(received);
        const file = form.get('file') as File;
        const fields: Record<string, string> = {};
        for (const [name, value] of form.entries()) if (typeof value === 'string') fields[name] = value;
        uploads.push({
          path: received.path,
          authorization: received.headers.authorization,
          fields,
          file: Buffer.from(await file.arrayBuffer()),
          filename: file.name,
        });
        const format = fields['response_format'] ?? 'json';
        if (format === 'text') return void response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('hello world\n');
        if (format === 'srt')
          return void response
            .writeHead(200, { 'content-type': 'text/plain; charset=utf-8' })
            .end('1\n00:00:00,000 --> 00:00:01,000\nhello\n');
        sendJson(response, 200, { text: 'hello world', usage: { type: 'tokens', input_tokens: 7, output_tokens: 3, total_tokens: 10 } });
      });
    }
    const configYaml = `
rate_limits:
  user_paths:
    - path: /limited
      limits: [{ period: minute, max_requests: 1 }]
`;
    gateway = await startGateway({ env: gatewayEnv(mock, { OPENAI_MODELS: 'tts-1,whisper-1,error-400' }), configYaml });
    client = openAIClient(gateway);
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  beforeEach(() => {
    uploads.length = 0;
  });

  it('returns the speech bytes with their content type, model resolved and hint removed', async () => {
    const speech = await client.audio.speech.create({ model: 'openai/tts-1', input: 'Hello', voice: 'alloy' });
    expect(speech.headers.get('content-type')).toBe('audio/mpeg');
    expect(Buffer.from(await speech.arrayBuffer()).equals(speechAudio)).toBe(true);
    const wav = await client.audio.speech.create({
      model: 'tts-1',
      input: 'Hi',
      voice: 'alloy',
      response_format: 'wav',
      provider: 'openai',
    } as OpenAI.Audio.SpeechCreateParams);
    expect(wav.headers.get('content-type')).toBe('audio/wav');
    const sent = mock.requests.filter((recorded) => recorded.path === '/v1/audio/speech').map((recorded) => recorded.body);
    expect(sent.at(-2)).toEqual({ model: 'tts-1', input: 'Hello', voice: 'alloy' });
    expect(sent.at(-1)).toEqual({ model: 'tts-1', input: 'Hi', voice: 'alloy', response_format: 'wav' });
    expect(mock.requests.at(-1)?.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
  });

  it('streams the audio to the client as it arrives', async () => {
    const response = await request(`${gateway.url}/v1/audio/speech`, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'tts-1', input: 'wait', voice: 'alloy' }),
    });
    expect(response.statusCode).toBe(200);
    const chunks: Buffer[] = [];
    for await (const chunk of response.body) {
      chunks.push(chunk as Buffer);
      // The first bytes arrived while the upstream is still holding the rest back.
      if (chunks.length === 1) releaseSpeech?.();
    }
    expect(Buffer.concat(chunks).equals(speechAudio)).toBe(true);
  });

  it('relays a transcription upload as a valid multipart form with the target model and the file intact', async () => {
    const file = await toFile(upload, 'meeting.mp3', { type: 'audio/mpeg' });
    const transcription = await client.audio.transcriptions.create({ file, model: 'openai/whisper-1', language: 'en', temperature: 0.2 });
    expect(transcription.text).toBe('hello world');
    const received = uploads.at(-1);
    expect(received?.path).toBe('/audio/transcriptions');
    expect(received?.fields).toEqual({ model: 'whisper-1', language: 'en', temperature: '0.2' });
    expect(received?.filename).toBe('meeting.mp3');
    expect(received?.file.equals(upload)).toBe(true);
    expect(received?.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
  });

  it('relays translations and the text and srt formats as the upstream wrote them', async () => {
    const file = await toFile(upload, 'talk.wav', { type: 'audio/wav' });
    const translation = await client.audio.translations.create({ file, model: 'whisper-1' });
    expect(translation.text).toBe('hello world');
    expect(uploads.at(-1)?.path).toBe('/audio/translations');
    const text = await client.audio.transcriptions.create({ file, model: 'whisper-1', response_format: 'text' });
    expect(text).toBe('hello world\n');
    const srt = await client.audio.transcriptions.create({ file, model: 'whisper-1', response_format: 'srt' });
    expect(srt).toContain('00:00:00,000 --> 00:00:01,000');
  });

  it('removes the provider hint field from the form', async () => {
    const form = new FormData();
    form.append('file', new Blob([upload], { type: 'audio/mpeg' }), 'a.mp3');
    form.append('provider', 'openai');
    form.append('model', 'whisper-1');
    const response = await request(`${gateway.url}/v1/audio/transcriptions`, { method: 'POST', headers: bearer(), body: form });
    expect(response.statusCode).toBe(200);
    await response.body.text();
    expect(uploads.at(-1)?.fields).toEqual({ model: 'whisper-1' });
  });

  it('records the request with the tokens of the answer usage', async () => {
    const scoped = new OpenAI({
      baseURL: `${gateway.url}/v1`,
      apiKey: MASTER_KEY,
      maxRetries: 0,
      defaultHeaders: { 'x-user-path': '/audio-usage' },
    });
    await scoped.audio.transcriptions.create({ file: await toFile(upload, 'a.mp3'), model: 'whisper-1' });
    await scoped.audio.speech.create({ model: 'tts-1', input: 'Hello', voice: 'alloy' }).then((speech) => speech.arrayBuffer());
    const row = await usageOf(gateway, '/audio-usage', 2);
    expect(row?.requests).toBe(2);
    expect(row?.prompt_tokens).toBe(7);
    expect(row?.completion_tokens).toBe(3);
  });

  it('refuses a request without a model, or an upload that is not multipart, with 400', async () => {
    const noModel = await rejectionOf(client.audio.speech.create({ input: 'x', voice: 'alloy' } as OpenAI.Audio.SpeechCreateParams));
    expectClientError(noModel, { status: 400, type: 'invalid_request_error', code: 'missing_field', param: 'model' });
    const form = new FormData();
    form.append('file', new Blob([upload]), 'a.mp3');
    const missing = await request(`${gateway.url}/v1/audio/transcriptions`, { method: 'POST', headers: bearer(), body: form });
    expectEnvelope(
      { status: missing.statusCode, headers: missing.headers, text: await missing.body.text() },
      { status: 400, type: 'invalid_request_error', param: 'model' },
    );
    const json = await request(`${gateway.url}/v1/audio/translations`, {
      method: 'POST',
      headers: { ...bearer(), 'content-type': 'application/json' },
      body: '{"model":"whisper-1"}',
    });
    expectEnvelope(
      { status: json.statusCode, headers: json.headers, text: await json.body.text() },
      { status: 400, type: 'invalid_request_error', code: 'invalid_body' },
    );
  });

  it('maps an upstream error to the envelope, message kept', async () => {
    const thrown = await rejectionOf(client.audio.speech.create({ model: 'error-400', input: 'x', voice: 'alloy' }));
    const error = expectClientError(thrown, { status: 400, type: 'invalid_request_error', provider: 'openai', param: 'voice' });
    expect(error.message).toBe('voice is invalid');
  });

  it('applies rate limits: the second call on a one-per-minute path gets 429 with Retry-After', async () => {
    const limited = new OpenAI({
      baseURL: `${gateway.url}/v1`,
      apiKey: MASTER_KEY,
      maxRetries: 0,
      defaultHeaders: { 'x-user-path': '/limited' },
    });
    const file = await toFile(upload, 'a.mp3');
    await limited.audio.transcriptions.create({ file, model: 'whisper-1' });
    const before = uploads.length;
    const thrown = await rejectionOf(limited.audio.transcriptions.create({ file, model: 'whisper-1' }));
    const error = expectClientError(thrown, { status: 429, type: 'rate_limit_error', provider: 'ratelimit', code: 'rate_limit_exceeded' });
    expect(error.message).toBe('rate limit exceeded for /limited: minute request limit of 1 reached');
    expect(Number((thrown as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(uploads.length).toBe(before);
    const speech = await rejectionOf(limited.audio.speech.create({ model: 'tts-1', input: 'x', voice: 'alloy' }));
    expectClientError(speech, { status: 429, type: 'rate_limit_error', provider: 'ratelimit' });
  });
});
