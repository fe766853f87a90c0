import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

/** The prefix the SDK's `McpError` puts before its message; the client side adds it again on receipt. */
const sdkPrefix = /^(?:MCP error -?\d+: )+/;

/** A message without any `MCP error <code>: ` prefix (an upstream's error relayed can carry several). */
export function plainErrorMessage(message: string): string {
  return message.replace(sdkPrefix, '');
}

/**
 * JSON-RPC errors leave the gateway with a plain `error.message`: an `McpError` thrown by a handler
 * (the gateway's own, the SDK's, or an upstream's relayed) would otherwise reach the client as
 * `MCP error -32602: MCP error -32602: ...`, since the client's SDK prefixes the code once more.
 */
export function withPlainErrorMessages<T extends Transport>(transport: T): T {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => send(plainError(message), options);
  return transport;
}

function plainError(message: JSONRPCMessage): JSONRPCMessage {
  if (!('error' in message)) return message;
  const plain = plainErrorMessage(message.error.message);
  return plain === message.error.message ? message : { ...message, error: { ...message.error, message: plain } };
}
