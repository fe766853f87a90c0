import type { RequestId } from '@modelcontextprotocol/sdk/types.js';

// Where the MCP protocol expects a JSON-RPC answer, the gateway's own errors take that form
// (ADR 0034); HTTP-level refusals before a request reaches a session (credentials, Host and
// Origin, unknown endpoint or session, rate limits) keep the CONTRACT section 4 envelope.

/** JSON-RPC 2.0 error codes the gateway answers itself. */
export const jsonRpcCodes = { parseError: -32700, invalidParams: -32602, internalError: -32603 } as const;

export interface JsonRpcErrorMessage {
  readonly jsonrpc: '2.0';
  readonly id: RequestId | null;
  readonly error: { readonly code: number; readonly message: string };
}

export function jsonRpcError(id: RequestId | null, code: number, message: string): JsonRpcErrorMessage {
  return { jsonrpc: '2.0', id, error: { code, message } };
}

/** `/mcp`, `/mcp/{name}` (with or without a query). */
export function isMcpUrl(url: string): boolean {
  return /^\/mcp(?:[/?]|$)/.test(url);
}

/** The id of a POST body holding one JSON-RPC request, else null (a batch, a notification, no body). */
export function requestIdOf(body: unknown): RequestId | null {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return null;
  const id = (body as { id?: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}
