import { request as httpRequest } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { expect } from 'vitest';

import { type GatewayProcess, MASTER_KEY } from './gateway-process.ts';
import { call } from './http.ts';

// Helpers of the MCP suites (mcp-*.test.ts): the SDK's own client in front of the gateway, the
// admin views of CONTRACT section 9, and raw HTTP for the transport suites.

export interface McpConnection {
  readonly client: Client;
  readonly transport: StreamableHTTPClientTransport;
}

export interface ConnectOptions {
  /** Defaults to the master key; null sends no credentials. */
  token?: string | null;
  headers?: Record<string, string>;
}

/** Connects the SDK client to `/mcp/{name}` (or `/mcp` for `''`) with a bearer credential. */
export async function connectMcp(gateway: GatewayProcess, name: string, options: ConnectOptions = {}): Promise<McpConnection> {
  const token = options.token === undefined ? MASTER_KEY : options.token;
  const headers = { ...(token === null ? {} : { authorization: `Bearer ${token}` }), ...options.headers };
  const url = new URL(name === '' ? `${gateway.url}/mcp` : `${gateway.url}/mcp/${name}`);
  const transport = new StreamableHTTPClientTransport(url, { requestInit: { headers } });
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  await client.connect(transport);
  return { client, transport };
}

/** The text of a tool result's first content part. */
export function textOf(result: unknown): string {
  const content = (result as { content?: Array<{ type: string; text?: string }> }).content ?? [];
  const first = content[0];
  expect(first?.type).toBe('text');
  return first?.text ?? '';
}

export interface ServerView {
  slug: string;
  status: string;
  last_error: string | null;
  tool_count: number;
  managed: boolean;
  [field: string]: unknown;
}

export async function listServers(gateway: GatewayProcess): Promise<ServerView[]> {
  const reply = await call(gateway, '/admin/mcp-servers');
  expect(reply.status, reply.text).toBe(200);
  return JSON.parse(reply.text) as ServerView[];
}

/** Waits until every slug is `connected` with at least one tool (upstreams connect in the background). */
export async function waitForConnected(gateway: GatewayProcess, slugs: readonly string[], timeoutMs = 15_000): Promise<ServerView[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const servers = await listServers(gateway);
    const ready = slugs.every((slug) => servers.some((server) => server.slug === slug && server.status === 'connected'));
    if (ready) return servers;
    if (Date.now() > deadline) throw new Error(`MCP servers not connected in time: ${JSON.stringify(servers)}`);
    await sleep(100);
  }
}

export async function listVirtualServers(gateway: GatewayProcess, token?: string | null): Promise<Array<Record<string, unknown>>> {
  const reply = await call(gateway, '/admin/mcp-virtual-servers', { token });
  expect(reply.status, reply.text).toBe(200);
  const parsed: unknown = JSON.parse(reply.text);
  expect(Array.isArray(parsed)).toBe(true);
  return parsed as Array<Record<string, unknown>>;
}

/** A raw JSON-RPC POST to an MCP endpoint, as a client with a session would send it. */
export async function rawMcpPost(
  gateway: GatewayProcess,
  path: string,
  message: Record<string, unknown>,
  headers: Record<string, string>,
  token: string | null = MASTER_KEY,
) {
  return call(gateway, path, {
    method: 'POST',
    body: { jsonrpc: '2.0', ...message },
    token,
    headers: { accept: 'application/json, text/event-stream', ...headers },
  });
}

export const putServer = (gateway: GatewayProcess, body: unknown) => call(gateway, '/admin/mcp-servers', { method: 'PUT', body });
export const putVirtual = (gateway: GatewayProcess, body: unknown) => call(gateway, '/admin/mcp-virtual-servers', { method: 'PUT', body });

export interface RawAnswer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
}

/**
 * Raw HTTP for the MCP transport suites (mcp-transport, mcp-resume): a request with exactly these
 * headers (Host included), reading the body until `until` matches or the end.
 */
export function rawMcpRequest(
  url: string,
  options: { method?: string; headers?: Record<string, string>; body?: string; until?: RegExp },
): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const outgoing = httpRequest(url, { method: options.method ?? 'POST', headers: options.headers }, (incoming) => {
      let text = '';
      const finish = (): void => resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, text });
      incoming.setEncoding('utf8');
      incoming.on('data', (chunk: string) => {
        text += chunk;
        if (options.until?.test(text) === true) {
          incoming.destroy();
          finish();
        }
      });
      incoming.on('end', finish);
    });
    outgoing.on('error', reject);
    outgoing.end(options.body);
  });
}
