import { setTimeout as sleep } from 'node:timers/promises';

import { expect } from 'vitest';

import type { GatewayProcess } from './gateway-process.ts';
import { call, callJson, parseJson } from './http.ts';
import { eventually } from './wait.ts';

// Admin API reads the suites share: usage rows (GET /admin/usage) and request log entries
// (GET /admin/requests), polled until the batch writers have stored them.

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

/** One row of GET /admin/usage. */
export interface UsageRow {
  key: string;
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  /** Null when a record of the group has no known price. */
  cost_usd: number | null;
  /** Records of the group without a known price. */
  unpriced_requests: number;
}

/** GET /admin/usage with a query; asserts 200 and the body shape; returns the rows by key. */
export async function adminUsage(gateway: GatewayProcess, query: Record<string, string>): Promise<Map<string, UsageRow>> {
  const body = await callJson(gateway, `/admin/usage?${new URLSearchParams(query).toString()}`, 200);
  expect(Object.keys(body).sort()).toEqual(['from', 'group_by', 'rows', 'to']);
  expect(body['group_by']).toBe(query['group_by'] ?? 'day');
  const rows = body['rows'] as UsageRow[];
  for (const row of rows) {
    expect(Object.keys(row).sort()).toEqual([
      'completion_tokens',
      'cost_usd',
      'key',
      'prompt_tokens',
      'requests',
      'total_tokens',
      'unpriced_requests',
    ]);
  }
  return new Map(rows.map((row) => [row.key, row]));
}

/** Today's UTC date, `YYYY-MM-DD`, shifted by whole days. */
export function utcDate(offsetDays = 0): string {
  return new Date(Date.now() + offsetDays * 86_400_000).toISOString().slice(0, 10);
}

/** Seconds from now to the next UTC midnight. */
export function secondsToUtcMidnight(): number {
  const now = new Date();
  const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
  return (midnight - now.getTime()) / 1000;
}

/** Waits for the usage row of `userPath` (grouped by user path) to reach `requests`. */
export async function usageOf(gateway: GatewayProcess, userPath: string, requests = 1): Promise<UsageRow | undefined> {
  let row: UsageRow | undefined;
  for (let tries = 0; tries < 50; tries += 1) {
    row = (await adminUsage(gateway, { group_by: 'user_path', user_path: userPath })).get(userPath);
    if (row !== undefined && row.requests >= requests) return row;
    await sleep(100);
  }
  return row;
}

/** What GET /admin/budgets lists as spent on `userPath` (NaN when it lists no budget there). */
export async function spentOf(gateway: GatewayProcess, userPath: string): Promise<number> {
  const body = await callJson(gateway, '/admin/budgets', 200);
  const budget = (body['budgets'] as Array<{ user_path: string; spent: number }>).find((item) => item.user_path === userPath);
  return budget?.spent ?? Number.NaN;
}
