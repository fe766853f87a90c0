import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, MASTER_KEY, runGatewayExpectingFailure, startGateway } from '../support/gateway-process.ts';
import { call, closedPort } from '../support/http.ts';
import {
  connectMcp,
  listServers,
  listVirtualServers,
  putServer,
  putVirtual,
  rawMcpPost,
  textOf,
  waitForConnected,
} from '../support/mcp.ts';
import { type McpFixture, startMcpFixture } from '../support/mcp-fixture-server.ts';

// SEED-SPEC `GET /admin/mcp-virtual-servers` (200/401/503, every field of mcpVirtualServerResponse)
// and CONTRACT section 9: config-declared and admin-managed servers and virtual servers.

const listingKeys = [
  'name',
  'description',
  'servers',
  'missing_servers',
  'conflict',
  'managed',
  'configured_tool_discovery',
  'tool_discovery',
];

describe('GET /admin/mcp-virtual-servers and the MCP admin API', () => {
  let alpha: McpFixture;
  let gamma: McpFixture;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    alpha = await startMcpFixture({ label: 'alpha', tools: ['echo', 'add'] });
    gamma = await startMcpFixture({ label: 'gamma', tools: ['whoami', 'echo'] });
    const configYaml = `
mcp:
  servers:
    alpha: { url: "${alpha.url}", description: Alpha }
    beta: { url: "http://127.0.0.1:${await closedPort()}/mcp" }
  virtual_servers:
    zeta: { servers: [alpha] }
    Coding: { description: " Alpha and a ghost ", servers: [Alpha, ghost, alpha], tool_discovery: "OFF" }
    beta: { servers: [alpha] }
`;
    gateway = await startGateway({ configYaml, env: { MASTER_KEY, MCP_TOOL_DISCOVERY: 'search' } });
    await waitForConnected(gateway, ['alpha']);
  });

  afterAll(async () => {
    await gateway?.stop();
    await alpha?.close();
    await gamma?.close();
  });

  it('lists config and admin-managed virtual servers with every field, sorted by name', async () => {
    const saved = await putVirtual(gateway, { name: ' Managed-One ', servers: ['ALPHA'], description: 'Made by an admin' });
    expect(saved.status, saved.text).toBe(200);
    const listing = await listVirtualServers(gateway);
    for (const entry of listing) expect(Object.keys(entry)).toEqual(listingKeys);
    expect(listing).toEqual([
      {
        name: 'beta',
        description: '',
        servers: ['alpha'],
        missing_servers: [],
        conflict: 'virtual MCP server "beta" is not served: MCP server "beta" uses the same name; rename one of them',
        managed: false,
        configured_tool_discovery: '',
        tool_discovery: 'search',
      },
      {
        name: 'coding',
        description: 'Alpha and a ghost',
        servers: ['alpha', 'ghost'],
        missing_servers: ['ghost'],
        conflict: '',
        managed: false,
        configured_tool_discovery: 'off',
        tool_discovery: 'off',
      },
      {
        name: 'managed-one',
        description: 'Made by an admin',
        servers: ['alpha'],
        missing_servers: [],
        conflict: '',
        managed: true,
        configured_tool_discovery: '',
        tool_discovery: 'search',
      },
      {
        name: 'zeta',
        description: '',
        servers: ['alpha'],
        missing_servers: [],
        conflict: '',
        managed: false,
        configured_tool_discovery: '',
        tool_discovery: 'search',
      },
    ]);
    expect(JSON.parse(saved.text)).toEqual(listing[2]);
  });

  it('answers 401 without valid credentials and 403 to a managed key', async () => {
    for (const token of [null, 'wrong-key']) {
      const reply = await call(gateway, '/admin/mcp-virtual-servers', { token });
      expectEnvelope(reply, { status: 401, type: 'authentication_error' });
    }
    const created = await call(gateway, '/admin/api-keys', { body: { name: 'not-admin' } });
    const key = (JSON.parse(created.text) as { key: string }).key;
    expectEnvelope(await call(gateway, '/admin/mcp-virtual-servers', { token: key }), { status: 403, type: 'permission_error' });
  });

  it('validates PUT bodies with 400 naming the field, and keeps config entries read-only (409)', async () => {
    const cases: Array<[unknown, string, string]> = [
      [{ servers: ['alpha'] }, 'name', 'name is required'],
      [{ name: 'my tools', servers: ['alpha'] }, 'name', 'virtual server name "my tools" must match ^[a-z0-9][a-z0-9_-]*$'],
      [{ name: 'x'.repeat(65), servers: ['alpha'] }, 'name', 'virtual server name exceeds 64 characters'],
      [{ name: 'v' }, 'servers', 'servers is required: list at least one MCP server slug'],
      [{ name: 'v', servers: [] }, 'servers', 'servers is required: list at least one MCP server slug'],
      [{ name: 'v', servers: ['git hub'] }, 'servers.0', 'member "git hub": server slug "git hub" must match ^[a-z0-9][a-z0-9_-]*$'],
      [
        { name: 'v', servers: ['alpha'], tool_discovery: 'semantic' },
        'tool_discovery',
        'tool_discovery must be "off" or "search", got "semantic"',
      ],
      [{ name: 'v', servers: ['zeta'] }, 'servers.0', 'member "zeta" is a virtual server; virtual servers can only include MCP servers'],
      [{ name: 'v', servers: ['alpha'], colour: 'red' }, 'colour', 'unknown field (expected description, servers, tool_discovery)'],
    ];
    for (const [body, param, message] of cases) {
      const error = expectEnvelope(await putVirtual(gateway, body), { status: 400, type: 'invalid_request_error', param });
      expect(error.message).toBe(message);
    }
    expectEnvelope(await putVirtual(gateway, '[1]'), { status: 400, type: 'invalid_request_error', code: 'invalid_body' });
    const readOnly = { status: 409, type: 'invalid_request_error', code: 'mcp_virtual_server_read_only' };
    expectEnvelope(await putVirtual(gateway, { name: 'CODING', servers: ['alpha'] }), readOnly);
    expectEnvelope(await call(gateway, '/admin/mcp-virtual-servers/Coding', { method: 'DELETE' }), readOnly);
    const missing = await call(gateway, '/admin/mcp-virtual-servers/nobody', { method: 'DELETE' });
    expectEnvelope(missing, { status: 404, type: 'not_found_error', code: 'mcp_virtual_server_not_found' });
  });

  it('a listing entry sent back unchanged is accepted; DELETE removes a managed entry and ends its endpoint', async () => {
    const saved = await putVirtual(gateway, { name: 'roundtrip', servers: ['alpha', 'nowhere'], tool_discovery: 'off' });
    const view = JSON.parse(saved.text) as Record<string, unknown>;
    const again = await putVirtual(gateway, view);
    expect(again.status, again.text).toBe(200);
    expect(JSON.parse(again.text)).toEqual(view);
    const { client } = await connectMcp(gateway, 'roundtrip');
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['add', 'echo']);
    const deleted = await call(gateway, '/admin/mcp-virtual-servers/roundtrip', { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    expect((await putVirtual(gateway, { name: 'by-body', servers: ['alpha'] })).status).toBe(200);
    expect((await call(gateway, '/admin/mcp-virtual-servers', { method: 'DELETE', body: { name: 'By-Body' } })).status).toBe(204);
    const noName = await call(gateway, '/admin/mcp-virtual-servers', { method: 'DELETE', body: {} });
    expectEnvelope(noName, { status: 400, type: 'invalid_request_error', code: 'missing_field', param: 'name' });
    expect((await listVirtualServers(gateway)).map((entry) => entry.name)).not.toContain('roundtrip');
    await expect(client.listTools()).rejects.toThrow();
    await client.close();
  });

  it('manages MCP servers: redacted headers, status and counts, stdio refused, config read-only', async () => {
    const saved = await putServer(gateway, { slug: 'gamma', url: gamma.url, headers: { 'X-Fixture-Token': 's3cret' }, description: 'G' });
    expect(saved.status, saved.text).toBe(200);
    expect(JSON.parse(saved.text)).toMatchObject({
      slug: 'gamma',
      transport: 'http',
      headers: { 'X-Fixture-Token': '***' },
      managed: true,
    });
    expect(saved.text).not.toContain('s3cret');
    const servers = await waitForConnected(gateway, ['gamma']);
    expect(servers.map((server) => server.slug)).toEqual(['alpha', 'beta', 'gamma']);
    expect(servers.find((server) => server.slug === 'gamma')).toMatchObject({
      status: 'connected',
      tool_count: 2,
      prompt_count: 1,
      last_error: null,
    });
    expect(servers.find((server) => server.slug === 'beta')).toMatchObject({ status: 'error', managed: false });
    expect(servers.find((server) => server.slug === 'beta')?.last_error).toMatch(/ECONNREFUSED/);
    // '***' keeps the stored value.
    const kept = await putServer(gateway, { slug: 'gamma', url: gamma.url, headers: { 'X-Fixture-Token': '***' } });
    expect(kept.status, kept.text).toBe(200);
    await waitForConnected(gateway, ['gamma']);
    const { client } = await connectMcp(gateway, 'gamma');
    expect(JSON.parse(textOf(await client.callTool({ name: 'whoami', arguments: {} })))).toMatchObject({ token: 's3cret' });
    await client.close();
    const stdio = await putServer(gateway, { slug: 'local', command: 'node' });
    expectEnvelope(stdio, { status: 400, type: 'invalid_request_error', param: 'transport' });
    expectEnvelope(await putServer(gateway, { slug: 'alpha', url: gamma.url }), {
      status: 409,
      type: 'invalid_request_error',
      code: 'mcp_server_read_only',
    });
    expectEnvelope(await putServer(gateway, { slug: 'ftp', url: 'ftp://x/' }), {
      status: 400,
      type: 'invalid_request_error',
      param: 'url',
    });
    expect((await call(gateway, '/admin/mcp-servers/gamma', { method: 'DELETE' })).status).toBe(204);
    expect((await listServers(gateway)).map((server) => server.slug)).toEqual(['alpha', 'beta']);
    const gone = await call(gateway, '/admin/mcp-servers/gamma', { method: 'DELETE' });
    expectEnvelope(gone, { status: 404, type: 'not_found_error', code: 'mcp_server_not_found' });
  });
});

describe('MCP admin state survives a restart (SQLite file)', () => {
  let fixture: McpFixture;

  beforeAll(async () => {
    fixture = await startMcpFixture({ label: 'delta', tools: ['echo'] });
  });

  afterAll(async () => {
    await fixture?.close();
  });

  it('keeps admin-managed servers and virtual servers across a restart', async () => {
    const first = await startGateway({ env: { MASTER_KEY } });
    try {
      expect((await putServer(first, { name: 'Delta', url: fixture.url })).status).toBe(200);
      const settings = { enabled: false, allowed_tools: ['echo'], disallowed_tools: ['x'], user_paths: ['/ops'], tool_timeout_seconds: 12 };
      expect((await putServer(first, { name: 'Épsilon Tools', url: fixture.url, ...settings })).status).toBe(200);
      expect((await putVirtual(first, { name: 'team', servers: ['delta', 'later'], tool_discovery: 'search' })).status).toBe(200);
    } finally {
      await first.stop();
    }
    const second = await startGateway({ env: { MASTER_KEY }, cwd: first.cwd });
    try {
      expect(await listVirtualServers(second)).toEqual([
        {
          name: 'team',
          description: '',
          servers: ['delta', 'later'],
          missing_servers: ['later'],
          conflict: '',
          managed: true,
          configured_tool_discovery: 'search',
          tool_discovery: 'search',
        },
      ]);
      const servers = await listServers(second);
      expect(servers.map((server) => [server.slug, server.managed])).toEqual([
        ['delta', true],
        ['epsilon-tools', true],
      ]);
      expect(servers[1]).toMatchObject({
        name: 'Épsilon Tools',
        enabled: false,
        status: 'disabled',
        allowed_tools: ['echo'],
        disallowed_tools: ['x'],
        user_paths: ['/ops'],
        tool_timeout_seconds: 12,
      });
      await waitForConnected(second, ['delta']);
      const { client } = await connectMcp(second, 'team');
      const found = await client.callTool({ name: 'call_tool', arguments: { name: 'delta_echo', arguments: { text: 'back' } } });
      expect(textOf(found)).toBe('delta: back');
      await client.close();
      expect((await call(second, '/admin/mcp-servers/delta', { method: 'DELETE' })).status).toBe(204);
      expect((await listVirtualServers(second))[0]?.['missing_servers']).toEqual(['delta', 'later']);
    } finally {
      await second.stop();
    }
  });
});

describe('MCP switched off', () => {
  let gateway: GatewayProcess;

  beforeAll(async () => {
    gateway = await startGateway({ env: { MASTER_KEY, MCP_ENABLED: 'false' } });
  });

  afterAll(async () => {
    await gateway?.stop();
  });

  it('answers the listing, the other MCP admin routes and /mcp with 503 feature_unavailable', async () => {
    const expected = { status: 503, type: 'invalid_request_error', code: 'feature_unavailable' };
    expectEnvelope(await call(gateway, '/admin/mcp-virtual-servers'), expected);
    expectEnvelope(await putVirtual(gateway, { name: 'v', servers: ['a'] }), expected);
    expectEnvelope(await call(gateway, '/admin/mcp-virtual-servers/v', { method: 'DELETE' }), expected);
    expectEnvelope(await call(gateway, '/admin/mcp-servers'), expected);
    expectEnvelope(await call(gateway, '/admin/mcp-servers/a/reconnect', { method: 'POST' }), expected);
    expectEnvelope(await call(gateway, '/admin/mcp-servers/a/catalog'), expected);
    expectEnvelope(await rawMcpPost(gateway, '/mcp/anything', { id: 1, method: 'initialize' }, {}), expected);
    // Credentials are still checked first.
    expectEnvelope(await call(gateway, '/admin/mcp-virtual-servers', { token: null }), { status: 401, type: 'authentication_error' });
  });

  it('a bad MCP setting aborts startup naming the key', async () => {
    const failed = await runGatewayExpectingFailure({ env: { MCP_TOOL_DISCOVERY: 'semantic' } });
    expect(failed.code).toBe(1);
    expect(failed.output).toContain('invalid configuration: MCP_TOOL_DISCOVERY: tool_discovery must be "off" or "search", got "semantic"');
  });
});
