import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { rejectionOf } from '../support/clients.ts';
import { type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { connectMcp, listServers, textOf, waitForConnected } from '../support/mcp.ts';
import { type McpFixture, startMcpFixture } from '../support/mcp-fixture-server.ts';
import { waitFor } from '../support/wait.ts';

// Upstream connections: catalog refresh on list_changed, error status while an upstream is down,
// background reconnect, and a restarted upstream that forgot the gateway's session.

describe('MCP upstream connections', () => {
  let fixture: McpFixture;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    fixture = await startMcpFixture({ label: 'live', tools: ['echo'] });
    gateway = await startGateway({ configYaml: `mcp:\n  servers:\n    live: { url: "${fixture.url}" }\n`, env: { MASTER_KEY } });
    await waitForConnected(gateway, ['live']);
  });

  afterAll(async () => {
    await gateway?.stop();
    await fixture?.close();
  });

  it('re-lists the catalog when the upstream announces tools/list_changed', async () => {
    fixture.addTool('late');
    const servers = await waitFor(
      () => listServers(gateway),
      (list) => list[0]?.tool_count === 2,
    );
    expect(servers[0]).toMatchObject({ slug: 'live', status: 'connected', tool_count: 2 });
    const { client } = await connectMcp(gateway, 'live');
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo', 'late']);
    expect(textOf(await client.callTool({ name: 'late', arguments: {} }))).toBe('live: late');
    await client.close();
  });

  it('reports an upstream that went away, and reconnects to it when it is back (its sessions forgotten)', async () => {
    const { client } = await connectMcp(gateway, 'live');
    const port = Number(new URL(fixture.url).port);
    await fixture.close();
    const failed = await rejectionOf(client.callTool({ name: 'echo', arguments: { text: 'x' } }));
    expect(failed).toBeInstanceOf(McpError);
    expect((failed as McpError).message).toMatch(/mcp server "live"/);
    const down = await waitFor(
      () => listServers(gateway),
      (list) => list[0]?.status === 'error',
    );
    expect(down[0]?.last_error).toMatch(/ECONNREFUSED/);
    // The catalog listed before the failure is kept.
    expect(down[0]?.tool_count).toBe(2);
    fixture = await startMcpFixture({ label: 'reborn', tools: ['echo'], port });
    await waitForConnected(gateway, ['live'], 20_000);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'back' } }))).toBe('reborn: back');
    await client.close();
  });

  it('a restarted upstream that lost the session is redialled on the next call', async () => {
    const { client } = await connectMcp(gateway, 'live');
    const port = Number(new URL(fixture.url).port);
    await fixture.close();
    fixture = await startMcpFixture({ label: 'third', tools: ['echo'], port });
    // No waiting: the gateway still holds the old upstream session and must recover within the call.
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'again' } }))).toBe('third: again');
    await client.close();
  });
});
