import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { McpServerDefinition } from './mcp-definitions.ts';

/**
 * The client transport for one upstream server. Static headers go with every request (the SDK keeps
 * them on the configured origin). A stdio server is spawned without a shell and gets only the SDK's
 * minimal inherited environment (HOME, LOGNAME, PATH, SHELL, TERM, USER) plus its own `env`: never
 * the gateway's master key, provider keys or database URL. Its stderr is piped to the gateway's log.
 */
export function createUpstreamTransport(definition: McpServerDefinition): Transport {
  if (definition.transport === 'stdio') {
    if (definition.command === null) throw new Error(`mcp server "${definition.slug}" has no command`);
    return new StdioClientTransport({
      command: definition.command,
      args: [...definition.args],
      env: { ...definition.env },
      stderr: 'pipe',
    });
  }
  if (definition.url === null) throw new Error(`mcp server "${definition.slug}" has no url`);
  const url = new URL(definition.url);
  const requestInit = { headers: { ...definition.headers } };
  return definition.transport === 'sse'
    ? new SSEClientTransport(url, { requestInit })
    : new StreamableHTTPClientTransport(url, { requestInit });
}

/**
 * A connection or listing failure as one line for `last_error` and the log: URLs are cut down to
 * their origin (no path, query or userinfo), and the usual mistakes get a hint.
 */
export function describeUpstreamError(error: unknown): string {
  const cause = error instanceof Error ? (error.cause as { code?: unknown; message?: unknown } | undefined) : undefined;
  const base = error instanceof Error ? error.message : String(error);
  const detail = typeof cause?.code === 'string' ? cause.code : typeof cause?.message === 'string' ? cause.message : '';
  let message = detail !== '' && !base.includes(detail) ? `${base}: ${detail}` : base;
  message = message.replace(/\b(https?:\/\/)([^\s/?#"']+)[^\s"']*/gi, (_match, scheme: string, authority: string) => {
    return `${scheme}${authority.replace(/^[^@]*@/, '')}`;
  });
  if (/\b404\b/.test(message)) message += ' (no MCP endpoint at that path: check the url)';
  else if (/\b405\b/.test(message)) message += ' (the endpoint likely speaks the other transport: check transport and url)';
  return message.length > 500 ? `${message.slice(0, 500)}…` : message;
}
