import type { IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import { Agent, fetch as undiciFetch, request } from 'undici';
import type { Dispatcher } from 'undici';
import { expect } from 'vitest';

import { type GatewayProcess, MASTER_KEY } from './gateway-process.ts';

// HTTP of the end-to-end suites: raw exchanges with undici (any method, the master key unless
// told otherwise), request bodies, JSON parsing, fresh connections and a port nothing listens on.

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

export interface Call {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** JSON-encoded unless a string. */
  body?: unknown;
  /** Defaults to the master key; null sends no credentials. */
  token?: string | null;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** A connection pool of the test's own; undici's global one unless told. */
  dispatcher?: Dispatcher;
}

/** One HTTP exchange with undici, any method, the master key unless told otherwise. */
export async function call(gateway: GatewayProcess, path: string, options: Call = {}): Promise<RawReply> {
  const token = options.token === undefined ? MASTER_KEY : options.token;
  const headers: Record<string, string> = { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...options.headers };
  const { body } = options;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await request(`${gateway.url}${path}`, {
    method: options.method ?? (body === undefined ? 'GET' : 'POST'),
    headers,
    body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
    signal: options.signal,
    dispatcher: options.dispatcher,
  });
  return { status: response.statusCode, headers: response.headers, text: await response.body.text() };
}

/** `call`, asserting the status; returns the JSON body. */
export async function callJson(
  gateway: GatewayProcess,
  path: string,
  status: number,
  options: Call = {},
): Promise<Record<string, unknown>> {
  const reply = await call(gateway, path, options);
  expect(reply.status, `${options.method ?? 'GET'} ${path}: ${reply.text}`).toBe(status);
  return parseJson(reply.text);
}

/** The statuses of several replies, in order. */
export const statuses = (replies: readonly RawReply[]): number[] => replies.map((reply) => reply.status);

/** How many of `values` are `wanted`. */
export const count = (values: readonly number[], wanted: number): number => values.filter((value) => value === wanted).length;

/** How many replies are 200s. */
export const admitted = (replies: readonly RawReply[]): number => replies.filter((reply) => reply.status === 200).length;

/** The response cache answered (`x-cache: HIT`). */
export const isHit = (reply: RawReply): boolean => reply.headers['x-cache'] === 'HIT';

// WORKERS > 1: the cluster hands new connections to the workers in turn, so a request on a
// connection of its own may reach any worker; several in a row reach every one of them.

/** One exchange on a fresh connection. */
export async function onNewConnection(url: string, options: RawRequestOptions = {}): Promise<RawReply> {
  const agent = new Agent();
  try {
    const { body } = options;
    const response = await undiciFetch(url, {
      method: options.method ?? (body === undefined ? 'GET' : 'POST'),
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      dispatcher: agent,
    });
    return { status: response.status, headers: Object.fromEntries(response.headers), text: await response.text() };
  } finally {
    await agent.close();
  }
}

/** The same exchange on `count` new connections, one after the other (every worker answers some). */
export async function onEachConnection(url: string, options: RawRequestOptions = {}, count = 6): Promise<RawReply[]> {
  const replies: RawReply[] = [];
  for (let index = 0; index < count; index += 1) replies.push(await onNewConnection(url, options));
  return replies;
}

/** A loopback port that was free a moment ago and has nothing listening on it now. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
  return port;
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
