import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { rejectionOf } from '../support/clients.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { rawRequest } from '../support/http.ts';
import { connectMcp, type McpConnection, textOf, waitForConnected } from '../support/mcp.ts';
import { type McpFixture, startMcpFixture } from '../support/mcp-fixture-server.ts';

// The MCP SDK's own client (Client + StreamableHTTPClientTransport) through the built gateway, as an
// MCP application uses it (issue 14.4): tools, error texts as the server wrote them, and a missing key
// that reads as a missing key (401 with `WWW-Authenticate: Bearer`), not as an OAuth failure.

describe('MCP SDK client through the gateway', () => {
  let fixture: McpFixture;
  let gateway: GatewayProcess;
  const connections: McpConnection[] = [];

  const connect = async (name: string): Promise<McpConnection> => {
    const connection = await connectMcp(gateway, name);
    connections.push(connection);
    return connection;
  };

  beforeAll(async () => {
    fixture = await startMcpFixture({ label: 'alpha', tools: ['echo', 'add', 'fail'] });
    const configYaml = `
mcp:
  servers:
    alpha:
      url: ${fixture.url}
`;
    gateway = await startGateway({ configYaml, env: { MASTER_KEY }, startTimeoutMs: 60_000 });
    await waitForConnected(gateway, ['alpha'], 30_000);
  }, 90_000);

  afterAll(async () => {
    await Promise.all(connections.map(({ client }) => client.close().catch(() => undefined)));
    await gateway?.stop();
    await fixture?.close();
  });

  it('connects, lists tools and calls one', async () => {
    const { client } = await connect('alpha');
    expect(client.getServerVersion()?.name).toBe('model-gateway');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['add', 'echo', 'fail']);
    expect(textOf(await client.callTool({ name: 'add', arguments: { a: 2, b: 40 } }))).toBe('alpha: 42');
    const failed = await client.callTool({ name: 'fail', arguments: {} });
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toBe('alpha: failed on purpose');
  });

  it("reports the gateway's own errors once: MCP error -32602: unknown tool", async () => {
    const { client } = await connect('alpha');
    const thrown = await rejectionOf(client.callTool({ name: 'nope', arguments: {} }));
    expect(thrown).toBeInstanceOf(McpError);
    expect((thrown as McpError).code).toBe(-32602);
    expect((thrown as McpError).message).toBe('MCP error -32602: unknown tool "nope"');
  });

  it("reports an upstream server's error once", async () => {
    const { client } = await connect('alpha');
    // The fixture's prompt needs `name`: its SDK server answers -32602.
    const thrown = await rejectionOf(client.getPrompt({ name: 'greeting', arguments: {} }));
    expect(thrown).toBeInstanceOf(McpError);
    expect((thrown as McpError).code).toBe(-32602);
    expect((thrown as McpError).message).toMatch(/^MCP error -32602: /);
    expect((thrown as McpError).message.match(/MCP error/g)).toHaveLength(1);
  });

  it('a missing key is a 401 with WWW-Authenticate: Bearer, and the SDK reports it without OAuth discovery', async () => {
    const url = `${gateway.url}/mcp/alpha`;
    const initialize = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    };
    const raw = await rawRequest(url, { headers: { accept: 'application/json, text/event-stream' }, body: initialize });
    expectEnvelope(raw, { status: 401, type: 'authentication_error', code: 'missing_credentials' });
    expect(raw.headers['www-authenticate']).toBe('Bearer');
    const wrong = await rawRequest(url, {
      headers: { accept: 'application/json, text/event-stream', authorization: 'Bearer nope' },
      body: initialize,
    });
    expect(wrong.status).toBe(401);
    expect(wrong.headers['www-authenticate']).toBe('Bearer');

    const before = gateway.logs().length;
    const client = new Client({ name: 'no-key', version: '1.0.0' });
    const thrown = await rejectionOf(client.connect(new StreamableHTTPClientTransport(new URL(url))));
    expect(thrown).toBeInstanceOf(StreamableHTTPError);
    expect((thrown as StreamableHTTPError).code).toBe(401);
    expect((thrown as Error).message).toContain('missing_credentials');
    // No OAuth discovery: the gateway saw no request for /.well-known/... metadata.
    const urls = gateway
      .logs()
      .slice(before)
      .map((line) => line['url']);
    expect(urls.some((logged) => typeof logged === 'string' && logged.includes('.well-known'))).toBe(false);
  });
});
