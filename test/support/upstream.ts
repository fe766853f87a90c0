import type { ServerResponse } from 'node:http';

import { Response } from 'undici';
import { expect } from 'vitest';

import type { MockRequest, MockUpstream, RecordedRequest } from './mock-upstream.ts';

// What a mock upstream received (chat requests, multipart forms, bodies) and how a test's own
// route of a mock answers JSON.

/** Decodes a multipart body the mock received, with undici's parser (fails on invalid forms). */
export function decodeForm(request: MockRequest): Promise<FormData> {
  return new Response(request.raw, {
    headers: { 'content-type': String(request.headers['content-type']) },
  }).formData() as Promise<FormData>;
}

export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify(body));
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

/** The body of the last chat or messages request upstream, JSON-encoded. */
export function lastUpstreamBody(requests: RecordedRequest[]): string {
  const posts = requests.filter((recorded) => recorded.method === 'POST' && /\/(chat\/completions|messages)$/.test(recorded.path));
  return JSON.stringify(posts.at(-1)?.body);
}

/** Samples every 2 ms how many chat requests are open at the mock; `stop()` returns the most seen. */
export function inFlightSampler(mock: MockUpstream): { stop(): number } {
  let max = 0;
  const sample = (): void => {
    max = Math.max(max, chatRequests(mock).filter((recorded) => !recorded.completed && !recorded.aborted).length);
  };
  const timer = setInterval(sample, 2);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return max;
    },
  };
}
