import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, type JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { plainErrorMessage, withPlainErrorMessages } from './plain-error-messages.ts';

describe('plain JSON-RPC error messages', () => {
  it("strips every prefix the SDK's McpError added", () => {
    const relayed = new McpError(ErrorCode.InvalidParams, new McpError(ErrorCode.InvalidParams, 'bad arguments').message);
    expect(relayed.message).toBe('MCP error -32602: MCP error -32602: bad arguments');
    expect(plainErrorMessage(relayed.message)).toBe('bad arguments');
    expect(plainErrorMessage('MCP errors happen')).toBe('MCP errors happen');
  });

  it('rewrites error responses on the way out and leaves other messages alone', async () => {
    const sent: JSONRPCMessage[] = [];
    const transport = withPlainErrorMessages({
      start: async () => undefined,
      close: async () => undefined,
      send: async (message: JSONRPCMessage) => void sent.push(message),
    } satisfies Transport);
    const error = {
      jsonrpc: '2.0' as const,
      id: 1,
      error: { code: -32602, message: 'MCP error -32602: unknown tool "x"', data: { a: 1 } },
    };
    const result = { jsonrpc: '2.0' as const, id: 2, result: {} };
    await transport.send(error);
    await transport.send(result);
    expect(sent).toEqual([{ ...error, error: { code: -32602, message: 'unknown tool "x"', data: { a: 1 } } }, result]);
  });
});
