import type { ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

import { Response } from 'undici';

import type { GatewayProcess } from '../support/gateway-process.ts';
import type { MockRequest } from '../support/mock-upstream.ts';
import { adminUsage } from './storage-helpers.ts';
import type { UsageRow } from './storage-helpers.ts';

// Helpers of the relay suites (audio, files and batches, passthrough): reading what the mock
// upstream received and waiting for usage records.

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
