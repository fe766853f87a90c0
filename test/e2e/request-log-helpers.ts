import { expect } from 'vitest';

import type { GatewayProcess } from '../support/gateway-process.ts';
import { parseJson } from './helpers.ts';
import { call, callJson, eventually } from './storage-helpers.ts';

// Helpers of the request log suites (request-log*.test.ts): the admin API's entries, polled
// until the batch writer has stored them.

export interface LoggedAttempt {
  provider: string;
  model: string;
  status: number | null;
  latency_ms: number | null;
  error_code: string | null;
}

/** One entry of GET /admin/requests (issue 16 "Names fixed here"). */
export interface LoggedRequest {
  id: string;
  time: string;
  user_path: string;
  api_key_id: string | null;
  api_key_name: string | null;
  endpoint: string;
  model_requested: string | null;
  virtual_model: string | null;
  attempts: LoggedAttempt[];
  provider: string | null;
  model: string | null;
  status: number;
  error_type: string | null;
  error_code: string | null;
  rate_limit: { scope: string; subject: string; period: string; kind: string } | null;
  latency_ms: number;
  ttft_ms: number | null;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost_usd: number | null;
  cache_hit: boolean;
  stream: boolean;
  user_agent: string | null;
  guardrails: Array<{ name: string; type: string; action: string; mode: string; stage: string }> | null;
  request_body?: string | null;
  response_body?: string | null;
}

export const entryKeys = [
  'api_key_id',
  'api_key_name',
  'attempts',
  'cache_hit',
  'completion_tokens',
  'cost_usd',
  'endpoint',
  'error_code',
  'error_type',
  'guardrails',
  'id',
  'latency_ms',
  'model',
  'model_requested',
  'prompt_tokens',
  'provider',
  'rate_limit',
  'status',
  'stream',
  'time',
  'total_tokens',
  'ttft_ms',
  'user_agent',
  'user_path',
  'virtual_model',
];

/** GET /admin/requests/{id}, polled until the entry is there (bodies included). */
export async function loggedRequest(gateway: GatewayProcess, requestId: string, timeoutMs = 5_000): Promise<LoggedRequest> {
  return eventually(
    async () => {
      const reply = await call(gateway, `/admin/requests/${encodeURIComponent(requestId)}`);
      if (reply.status === 404) return undefined;
      expect(reply.status, reply.text).toBe(200);
      return parseJson(reply.text) as unknown as LoggedRequest;
    },
    `a request log entry for ${requestId}`,
    timeoutMs,
  );
}

/** GET /admin/requests with a query; asserts 200 and the listing's shape. */
export async function listRequests(
  gateway: GatewayProcess,
  query: Record<string, string>,
): Promise<{ requests: LoggedRequest[]; next_cursor: string | null }> {
  const body = await callJson(gateway, `/admin/requests?${new URLSearchParams(query).toString()}`, 200);
  expect(Object.keys(body).sort()).toEqual(['next_cursor', 'requests']);
  const requests = body['requests'] as LoggedRequest[];
  for (const entry of requests) expect(Object.keys(entry).sort()).toEqual(entryKeys);
  return { requests, next_cursor: body['next_cursor'] as string | null };
}
