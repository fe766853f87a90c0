import { expect } from 'vitest';

import { type GatewayProcess, MASTER_KEY, UPSTREAM_KEY } from './gateway-process.ts';
import { call, chatBody, parseJson, type RawReply } from './http.ts';
import { type MockUpstream, startMockUpstream } from './mock-upstream.ts';
import { chatRequests } from './upstream.ts';

// Helpers of the virtual model and response cache suites (virtual-models-*.test.ts,
// response-cache*.test.ts): two or three mock upstreams registered as the instances `openai`,
// `openai-b` and `openai-c`, and chat calls that read who served them.

/** Instance names, in the order of the mocks handed to `instancesEnv`. */
export const INSTANCES = ['openai', 'openai-b', 'openai-c'] as const;
const envPrefixes = ['OPENAI', 'OPENAI_B', 'OPENAI_C'] as const;

export async function startMocks(count: number): Promise<MockUpstream[]> {
  return Promise.all(Array.from({ length: count }, () => startMockUpstream()));
}

export async function closeAll(mocks: readonly (MockUpstream | undefined)[]): Promise<void> {
  await Promise.all(mocks.map((mock) => mock?.close()));
}

/** MASTER_KEY plus one instance per mock (`openai`, `openai-b`, `openai-c`), each serving `models`. */
export function instancesEnv(
  mocks: readonly MockUpstream[],
  models: readonly string[],
  extra: Record<string, string> = {},
): Record<string, string> {
  const env: Record<string, string> = { MASTER_KEY };
  mocks.forEach((mock, index) => {
    const prefix = envPrefixes[index];
    if (prefix === undefined) throw new Error('at most three mocks');
    env[`${prefix}_API_KEY`] = UPSTREAM_KEY;
    env[`${prefix}_BASE_URL`] = mock.url;
    env[`${prefix}_MODELS`] = models.join(',');
  });
  return { ...env, ...extra };
}

/** Chat requests a mock received for one upstream model id. */
export function chatCount(mock: MockUpstream, model?: string): number {
  return chatRequests(mock).filter((recorded) => model === undefined || (recorded.body as { model?: unknown }).model === model).length;
}

export interface ChatCall {
  headers?: Record<string, string>;
  extra?: Record<string, unknown>;
  token?: string | null;
}

/** `POST /v1/chat/completions` with `chatBody(model, extra)` through undici. */
export function chat(gateway: GatewayProcess, model: string, options: ChatCall = {}): Promise<RawReply> {
  return call(gateway, '/v1/chat/completions', {
    body: chatBody(model, options.extra),
    ...(options.headers === undefined ? {} : { headers: options.headers }),
    ...(options.token === undefined ? {} : { token: options.token }),
  });
}

/** A chat that must succeed; returns the instance that served it (`provider` of the body). */
export async function servedBy(gateway: GatewayProcess, model: string, options: ChatCall = {}): Promise<string> {
  const reply = await chat(gateway, model, options);
  expect(reply.status, reply.text).toBe(200);
  const provider = parseJson(reply.text)['provider'];
  expect(typeof provider).toBe('string');
  return provider as string;
}

/** Runs `task(i)` for i in [0, total) with at most `concurrency` in flight; results in order. */
export async function inBatches<Result>(total: number, concurrency: number, task: (index: number) => Promise<Result>): Promise<Result[]> {
  const results: Result[] = [];
  for (let start = 0; start < total; start += concurrency) {
    const size = Math.min(concurrency, total - start);
    results.push(...(await Promise.all(Array.from({ length: size }, (_unused, offset) => task(start + offset)))));
  }
  return results;
}

/** How many times each value occurs. */
export function tally(values: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const value of values) counts.set(value, (counts.get(value) ?? 0) + 1);
  return counts;
}
