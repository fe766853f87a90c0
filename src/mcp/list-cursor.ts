import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';
import { jsonRpcCodes, jsonRpcError } from './jsonrpc-errors.ts';

/** The list methods a session serves in one page (session-server.ts computes each list whole). */
const listMethods = new Set(['tools/list', 'prompts/list', 'resources/list', 'resources/templates/list']);

/**
 * The gateway answers every list in one page and never issues a `nextCursor`, so any `cursor` a
 * client sends is one it did not issue: the MCP spec (pagination) answers that with -32602. Checked
 * as messages arrive, before the session server's handlers, so every list method of every
 * endpoint kind gets it. Install after `server.connect(transport)` (which sets `onmessage`).
 */
export function withCursorCheck<T extends Transport>(transport: T): T {
  const deliver = transport.onmessage;
  transport.onmessage = (message, extra) => {
    if (isJSONRPCRequest(message) && listMethods.has(message.method) && message.params?.['cursor'] !== undefined) {
      const { error } = jsonRpcError(
        message.id,
        jsonRpcCodes.invalidParams,
        `invalid cursor for ${message.method}: this list has one page`,
      );
      void transport
        .send({ jsonrpc: '2.0', id: message.id, error }, { relatedRequestId: message.id })
        .catch((failure: unknown) => transport.onerror?.(failure as Error));
      return;
    }
    deliver?.(message, extra);
  };
  return transport;
}
