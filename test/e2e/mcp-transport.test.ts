import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { rejectionOf } from '../support/clients.ts';
import { type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { bearer } from '../support/http.ts';
import { rawMcpRequest } from '../support/mcp.ts';
import { type McpFixture, startMcpFixture } from '../support/mcp-fixture-server.ts';

// The MCP transport edges of ADR 0034: Host and Origin checks on a loopback gateway, and errors in
// JSON-RPC form where the protocol expects one (parse errors, cursors the gateway never issued).

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'e2e', version: '1.0.0' } },
});
const postHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...bearer() };

// A master key: in open mode the gateway-wide loopback-Host rule (host_not_allowed) answers first.
describe('MCP transport: Host, Origin and JSON-RPC errors (loopback gateway)', () => {
  let upstream: McpFixture;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    upstream = await startMcpFixture({ label: 'alpha' });
    gateway = await startGateway({
      env: {
        HOST: '127.0.0.1',
        MASTER_KEY,
        MCP_ALLOWED_HOSTS: 'gateway.test',
        MCP_SERVERS: JSON.stringify({ alpha: { url: upstream.url } }),
      },
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await upstream?.close();
  });

  const endpoint = (): string => `${gateway.url}/mcp/alpha`;

  it('refuses a Host the gateway is not reached by, and accepts loopback names, loopback origins and MCP_ALLOWED_HOSTS', async () => {
    const port = gateway.port;
    const rebound = await rawMcpRequest(endpoint(), {
      headers: { ...postHeaders, host: 'evil.example.com', origin: 'http://evil.example.com' },
      body: initialize,
    });
    expect(rebound.status, rebound.text).toBe(403);
    expect(JSON.parse(rebound.text).error).toMatchObject({ type: 'permission_error', code: 'mcp_host_not_allowed' });
    const listedHostForeignOrigin = await rawMcpRequest(endpoint(), {
      headers: { ...postHeaders, host: 'gateway.test', origin: 'http://gateway.test' },
      body: initialize,
    });
    expect(JSON.parse(listedHostForeignOrigin.text).error).toMatchObject({ code: 'origin_not_allowed' });
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `gateway.test:${port}`]) {
      const answer = await rawMcpRequest(endpoint(), {
        headers: { ...postHeaders, host, ...(host.startsWith('gateway.test') ? {} : { origin: `http://${host}` }) },
        body: initialize,
        until: /"result"/,
      });
      expect(answer.status, `${host}: ${answer.text}`).toBe(200);
      expect(answer.text).toContain('"protocolVersion"');
    }
  });

  it('answers a body that is not JSON with a JSON-RPC parse error (HTTP 400)', async () => {
    const answer = await rawMcpRequest(endpoint(), { headers: postHeaders, body: '{"jsonrpc": "2.0", ' });
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32700 } });
  });

  it('answers a list cursor it never issued with -32602, and lists without one', async () => {
    const client = new Client({ name: 'e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(endpoint()), { requestInit: { headers: bearer() } }));
    try {
      // The upstream's catalog is listed in the background after start-up.
      await expect.poll(async () => (await client.listTools()).tools.length, { timeout: 10_000 }).toBeGreaterThan(0);
      for (const list of [() => client.listTools({ cursor: 'bogus' }), () => client.listPrompts({ cursor: 'bogus' })]) {
        const refused = await rejectionOf(list());
        expect(refused).toBeInstanceOf(McpError);
        expect((refused as McpError).code).toBe(-32602);
      }
      const refused = await rejectionOf(client.listResources({ cursor: 'x' }));
      expect((refused as McpError).code).toBe(-32602);
    } finally {
      await client.close();
    }
  });
});
