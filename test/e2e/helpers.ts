import type { IncomingHttpHeaders } from 'node:http';

import OpenAI from 'openai';
import { request } from 'undici';
import { expect } from 'vitest';

import type { GatewayProcess } from '../support/gateway-process.ts';
import type { MockUpstream, RecordedRequest } from '../support/mock-upstream.ts';

// Shared helpers of the end-to-end suites: the usual gateway environment, clients, raw HTTP
// and assertions on the error envelope of CONTRACT section 4.

export const MASTER_KEY = 'test-master-key';
export const UPSTREAM_KEY = 'sk-upstream';

/** The environment of a gateway with one `openai` instance in front of the mock. */
export function gatewayEnv(mock: MockUpstream, extra: Record<string, string> = {}): Record<string, string> {
  return { MASTER_KEY, OPENAI_API_KEY: UPSTREAM_KEY, OPENAI_BASE_URL: mock.url, ...extra };
}

export function openAIClient(gateway: GatewayProcess, apiKey = MASTER_KEY): OpenAI {
  return new OpenAI({ baseURL: `${gateway.url}/v1`, apiKey, maxRetries: 0, timeout: 10_000 });
}

export interface RawReply {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export interface RawRequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  headers?: Record<string, string>;
  /** A string is sent as is; anything else is JSON-encoded. */
  body?: unknown;
  signal?: AbortSignal;
}

/** One HTTP exchange with undici, the whole body read as text. */
export async function rawRequest(url: string, options: RawRequestOptions = {}): Promise<RawReply> {
  const { body } = options;
  const encoded = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  const headers = encoded === undefined ? options.headers : { 'content-type': 'application/json', ...options.headers };
  const response = await request(url, {
    method: options.method ?? (encoded === undefined ? 'GET' : 'POST'),
    headers,
    body: encoded,
    signal: options.signal,
  });
  return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
}

export function bearer(token = MASTER_KEY): Record<string, string> {
  return { authorization: `Bearer ${token}` };
}

export function chatBody(model: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { model, messages: [{ role: 'user', content: 'Say hello' }], ...extra };
}

export function parseJson(text: string): Record<string, unknown> {
  const parsed: unknown = JSON.parse(text);
  expect(typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed), `not a JSON object: ${text}`).toBe(true);
  return parsed as Record<string, unknown>;
}

export interface EnvelopeError {
  type: string;
  message: string;
  code: string | null;
  param: string | null;
  provider: string;
  status_code: number;
}

export interface ExpectedError {
  status: number;
  type: string;
  /** Defaults to `gateway`. */
  provider?: string;
  code?: string | null;
  param?: string | null;
}

const envelopeKeys = ['code', 'message', 'param', 'provider', 'status_code', 'type'];

/** Asserts that a raw reply is exactly the CONTRACT section 4 envelope; returns its `error`. */
export function expectEnvelope(reply: RawReply, expected: ExpectedError): EnvelopeError {
  expect(reply.status, reply.text).toBe(expected.status);
  expect(String(reply.headers['content-type'])).toMatch(/^application\/json/);
  const body = parseJson(reply.text);
  expect(Object.keys(body)).toEqual(['error']);
  const error = body['error'] as EnvelopeError;
  expect(Object.keys(error).sort()).toEqual(envelopeKeys);
  expect(error.type).toBe(expected.type);
  expect(error.status_code).toBe(expected.status);
  expect(error.provider).toBe(expected.provider ?? 'gateway');
  expect(typeof error.message).toBe('string');
  expect(error.message.length).toBeGreaterThan(0);
  expect(error.code === null || typeof error.code === 'string').toBe(true);
  expect(error.param === null || typeof error.param === 'string').toBe(true);
  if (expected.code !== undefined) expect(error.code).toBe(expected.code);
  if (expected.param !== undefined) expect(error.param).toBe(expected.param);
  return error;
}

/** The rejection of a call that must fail. */
export async function rejectionOf(promise: PromiseLike<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected the call to fail, but it succeeded');
}

/** Asserts an openai-client error carries the envelope fields; returns the envelope's `error`. */
export function expectClientError(thrown: unknown, expected: ExpectedError): EnvelopeError {
  expect(thrown).toBeInstanceOf(OpenAI.APIError);
  const apiError = thrown as InstanceType<typeof OpenAI.APIError>;
  expect(apiError.status).toBe(expected.status);
  const error = apiError.error as EnvelopeError | undefined;
  expect(error).toBeDefined();
  expect(error?.type).toBe(expected.type);
  expect(error?.status_code).toBe(expected.status);
  expect(error?.provider).toBe(expected.provider ?? 'gateway');
  if (expected.code !== undefined) expect(error?.code).toBe(expected.code);
  if (expected.param !== undefined) expect(error?.param).toBe(expected.param);
  return error as EnvelopeError;
}

/** Chat requests the mock received (model listings left out). */
export function chatRequests(mock: MockUpstream): RecordedRequest[] {
  return mock.requests.filter((recorded) => recorded.method === 'POST' && recorded.path.endsWith('/chat/completions'));
}

/** The JSON body of the last chat request the mock received. */
export function lastChatBody(mock: MockUpstream): Record<string, unknown> {
  const last = chatRequests(mock).at(-1);
  expect(last, 'the mock received no chat request').toBeDefined();
  const body = last?.body;
  expect(typeof body === 'object' && body !== null).toBe(true);
  return body as Record<string, unknown>;
}

/** Waits until the mock has received a chat request for `model`; returns its record. */
export async function waitForChat(mock: MockUpstream, model: string, timeoutMs = 2000): Promise<RecordedRequest> {
  const matches = (recorded: RecordedRequest): boolean => (recorded.body as { model?: unknown } | undefined)?.model === model;
  await mock.waitFor((requests) => requests.some(matches), timeoutMs);
  const found = mock.requests.find(matches);
  if (found === undefined) throw new Error(`no request for ${model}`);
  return found;
}

/** The JSON chunks of an SSE body; asserts `data:` framing and the final `data: [DONE]`. */
export function parseSse(text: string): Record<string, unknown>[] {
  const frames = text.split('\n\n').filter((frame) => frame !== '');
  for (const frame of frames) expect(frame.startsWith('data: '), frame).toBe(true);
  expect(frames.at(-1)).toBe('data: [DONE]');
  return frames.slice(0, -1).map((frame) => parseJson(frame.slice('data: '.length)));
}

export interface ListedModel {
  id: string;
  object: string;
  created: number;
  owned_by: string;
}

/** `GET /v1/models` with the master key, asserting the list shape. */
export async function listModels(gateway: GatewayProcess, token = MASTER_KEY): Promise<ListedModel[]> {
  const reply = await rawRequest(`${gateway.url}/v1/models`, { headers: bearer(token) });
  expect(reply.status, reply.text).toBe(200);
  const body = parseJson(reply.text);
  expect(body['object']).toBe('list');
  expect(Array.isArray(body['data'])).toBe(true);
  return body['data'] as ListedModel[];
}
