import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';

// What the shared upstream client (upstream-connection.ts) and the per-session upstream clients
// (upstream-sessions.ts) have in common: how a client ends, and how a failed call is classified.

/** How long a closing client waits for the upstream to acknowledge the end of its session. */
const terminateTimeoutMs = 2_000;

export const gatewayClientInfo = { name: 'model-gateway', version: '0.1.0' } as const;

/**
 * Closes a client for good. A Streamable HTTP upstream is first told that our session ended (DELETE,
 * bounded in time), so that it does not keep the session until its own idle timeout.
 */
export async function endSession(client: Client): Promise<void> {
  const { transport } = client;
  if (transport instanceof StreamableHTTPClientTransport) {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, terminateTimeoutMs)));
    await Promise.race([transport.terminateSession().catch(() => undefined), timeout]);
    clearTimeout(timer);
  }
  await client.close().catch(() => undefined);
}

/** The upstream never processed the request: its session was unknown (404) or nobody listened. */
export function notDelivered(error: unknown): boolean {
  if (error instanceof StreamableHTTPError) return error.code === 404;
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  if (cause?.code === 'ECONNREFUSED') return true;
  return error instanceof Error && /\(HTTP 404\)/.test(error.message);
}

/** Not an answer of the upstream server (those are McpErrors with a JSON-RPC code) but a broken channel. */
export function isTransportFailure(error: unknown): boolean {
  if (error instanceof McpError) return error.code === ErrorCode.ConnectionClosed;
  return error instanceof Error && error.name !== 'AbortError';
}

/** A stdio server's stderr, line by line, into the gateway's log (a pipe nobody reads would block the child). */
export function pipeStderr(transport: Transport, logger: Logger, slug: string): void {
  const stderr = 'stderr' in transport ? (transport.stderr as Readable | null) : null;
  if (stderr === null) return;
  stderr.setEncoding('utf8');
  stderr.on('data', (chunk: string) => {
    for (const line of chunk.split('\n')) {
      if (line.trim() !== '') logger.info({ mcp_server: slug, stderr: line.slice(0, 1000) }, 'mcp server stderr');
    }
  });
}
