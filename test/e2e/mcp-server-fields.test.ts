import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { call, closedPort } from '../support/http.ts';
import {
  connectMcp,
  listServers,
  listVirtualServers,
  putServer,
  putVirtual,
  rawMcpPost,
  type ServerView,
  textOf,
  waitForConnected,
} from '../support/mcp.ts';
import { type McpFixture, startMcpFixture } from '../support/mcp-fixture-server.ts';

// The server fields of GoModel's admin API (reference/mcp.md 1.2-1.3 and 5): a PUT in GoModel's
// shape with a display name, enabled, allowed/disallowed tools, user_paths scopes, the per-call
// tool timeout, reconnect and the catalog, against real SDK servers behind the gateway.

const onPath = (userPath: string) => ({ headers: { 'x-user-path': userPath } });
const toolNames = async (connection: Awaited<ReturnType<typeof connectMcp>>) =>
  (await connection.client.listTools()).tools.map((tool) => tool.name);

async function viewOf(gateway: GatewayProcess, slug: string): Promise<ServerView> {
  const found = (await listServers(gateway)).find((server) => server.slug === slug);
  if (found === undefined) throw new Error(`no server ${slug}`);
  return found;
}

describe('MCP server fields (GoModel admin body)', () => {
  let linear: McpFixture;
  let docs: McpFixture;
  let slow: McpFixture;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    linear = await startMcpFixture({ label: 'linear', tools: ['echo', 'add', 'whoami', 'fail'], instructions: 'Linear tools.' });
    docs = await startMcpFixture({ label: 'docs', tools: ['echo', 'create_issue', 'list_issues'] });
    slow = await startMcpFixture({ label: 'slow', tools: ['sleep', 'echo'] });
    const configYaml = `
mcp:
  servers:
    cfg:
      name: Config Docs
      url: "${docs.url}"
      allowed_tools: [echo, list_issues]
      user_paths: [/team-a]
      tool_timeout: 45s
`;
    gateway = await startGateway({ configYaml, env: { MASTER_KEY } });
    await waitForConnected(gateway, ['cfg']);
  });

  afterAll(async () => {
    await gateway?.stop();
    await Promise.all([linear?.close(), docs?.close(), slow?.close()]);
  });

  it('a GoModel-shaped PUT with a display name derives the slug, ignores unknown fields and shows every setting', async () => {
    const saved = await putServer(gateway, {
      name: 'Linear MCP',
      url: linear.url,
      transport: 'http',
      headers: {},
      description: 'Issues',
      enabled: true,
      allowed_tools: [],
      disallowed_tools: [],
      user_paths: [],
      tool_timeout_seconds: 0,
      icon: { emoji: '📐' },
      future_field: 'ignored',
    });
    expect(saved.status, saved.text).toBe(200);
    const view = JSON.parse(saved.text) as Record<string, unknown>;
    expect(view).toMatchObject({
      name: 'Linear MCP',
      slug: 'linear-mcp',
      description: 'Issues',
      transport: 'http',
      enabled: true,
      allowed_tools: [],
      disallowed_tools: [],
      user_paths: [],
      tool_timeout_seconds: 30,
      managed: true,
      excluded_tool_count: 0,
    });
    expect(view).not.toHaveProperty('icon');
    expect(view).not.toHaveProperty('future_field');
    await waitForConnected(gateway, ['linear-mcp']);
    const pinned = await connectMcp(gateway, 'linear-mcp');
    expect(textOf(await pinned.client.callTool({ name: 'echo', arguments: { text: 'hi' } }))).toBe('linear: hi');
    expect(pinned.client.getInstructions()).toBe('Linear tools.');
    await pinned.client.close();
    // Aggregated instructions head each upstream's own with its display name and slug.
    const aggregate = await connectMcp(gateway, '');
    expect(aggregate.client.getInstructions()).toContain('\n\n## Linear MCP (`linear-mcp`)\nLinear tools.');
    await aggregate.client.close();

    const hashed = await putServer(gateway, { name: '线性', url: linear.url });
    expect(JSON.parse(hashed.text)).toMatchObject({ name: '线性', slug: 'mcp-b7ccbb8b' });
    const explicit = await putServer(gateway, { name: 'Café Tools', slug: 'Cafe', url: linear.url });
    expect(JSON.parse(explicit.text)).toMatchObject({ name: 'Café Tools', slug: 'cafe' });
    // Today's form still works: a name that is a slug is the slug; only a slug shows it as the name.
    expect(JSON.parse((await putServer(gateway, { name: 'my_tools', url: linear.url })).text)).toMatchObject({ slug: 'my_tools' });
    expect(JSON.parse((await putServer(gateway, { slug: 'bare', url: linear.url })).text)).toMatchObject({ name: 'bare', slug: 'bare' });
    // The config server shows its settings, read-only.
    expect(await viewOf(gateway, 'cfg')).toMatchObject({
      name: 'Config Docs',
      managed: false,
      allowed_tools: ['echo', 'list_issues'],
      user_paths: ['/team-a'],
      tool_timeout_seconds: 45,
      tool_count: 2,
      excluded_tool_count: 1,
    });
    expectEnvelope(await putServer(gateway, { name: 'Renamed', slug: 'cfg', url: docs.url }), {
      status: 409,
      type: 'invalid_request_error',
      code: 'mcp_server_read_only',
    });
    for (const slug of ['mcp-b7ccbb8b', 'cafe', 'my_tools', 'bare']) {
      expect((await call(gateway, `/admin/mcp-servers/${slug}`, { method: 'DELETE' })).status).toBe(204);
    }
  });

  it('refuses wrong values of known fields with 400 naming the field', async () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ url: linear.url }, 'name', 'name is required'],
      [{ name: '  ', url: linear.url }, 'name', 'name is required'],
      [{ name: 5, url: linear.url }, 'name', 'name must be a string'],
      [{ name: 'x'.repeat(101), url: linear.url }, 'name', 'server name exceeds 100 characters'],
      [{ name: 'bad\u0001name', slug: 'ok', url: linear.url }, 'name', 'server name must not contain control characters'],
      [{ name: 'ok', slug: 'not ok', url: linear.url }, 'slug', 'server slug "not ok" must match ^[a-z0-9][a-z0-9_-]*$'],
      [{ name: 'ok', url: linear.url, enabled: 'yes' }, 'enabled', 'enabled must be a boolean'],
      [{ name: 'ok', url: linear.url, allowed_tools: 5 }, 'allowed_tools', 'allowed_tools must be a list of tool names'],
      [
        { name: 'ok', url: linear.url, user_paths: ['/a/../b'] },
        'user_paths.0',
        'invalid user_paths value "/a/../b": ".." segments are not allowed',
      ],
      [{ name: 'ok', url: linear.url, tool_timeout_seconds: -1 }, 'tool_timeout_seconds', 'tool_timeout_seconds must not be negative'],
      [{ name: 'ok', url: 'ftp://x/' }, 'url', 'url must start with http:// or https://'],
      [{ name: 'ok' }, 'url', 'url is required for the http transport'],
    ];
    for (const [body, param, message] of cases) {
      const error = expectEnvelope(await putServer(gateway, body), { status: 400, type: 'invalid_request_error', param });
      expect(error.message).toBe(message);
    }
    expect((await listServers(gateway)).map((server) => server.slug)).not.toContain('ok');
  });

  it('a disabled server is neither connected nor served, still counts for virtual servers, and stays disabled when an update omits enabled', async () => {
    const sessionsBefore = docs.sessionCount();
    const saved = await putServer(gateway, { name: 'Docs', url: docs.url, enabled: false });
    expect(JSON.parse(saved.text)).toMatchObject({ slug: 'docs', enabled: false, status: 'disabled', tool_count: 0 });
    expect((await putVirtual(gateway, { name: 'reading', servers: ['docs', 'linear-mcp'] })).status).toBe(200);
    expect((await listVirtualServers(gateway)).find((entry) => entry.name === 'reading')?.['missing_servers']).toEqual([]);
    const pinned = await rawMcpPost(gateway, '/mcp/docs', { id: 1, method: 'tools/list' }, {});
    const error = expectEnvelope(pinned, { status: 404, type: 'not_found_error', code: 'mcp_endpoint_not_found' });
    expect(error.message).toBe('mcp server is disabled: docs');
    const reading = await connectMcp(gateway, 'reading');
    expect((await toolNames(reading)).some((name) => name.startsWith('docs_'))).toBe(false);
    const aggregate = await connectMcp(gateway, '');
    expect((await toolNames(aggregate)).some((name) => name.startsWith('docs_'))).toBe(false);
    await aggregate.client.close();

    const updated = await putServer(gateway, { slug: 'docs', url: docs.url, description: 'still off' });
    expect(JSON.parse(updated.text)).toMatchObject({ enabled: false, status: 'disabled', description: 'still off', name: 'Docs' });
    expect(docs.sessionCount()).toBe(sessionsBefore);

    expect(JSON.parse((await putServer(gateway, { slug: 'docs', url: docs.url, enabled: true })).text)).toMatchObject({ enabled: true });
    await waitForConnected(gateway, ['docs']);
    // The open session sees the server once it is enabled (lists follow the current state).
    // A virtual server lists a name one member has bare, and namespaces the names both have (ADR 0033).
    expect(await toolNames(reading)).toEqual(expect.arrayContaining(['create_issue', 'docs_echo', 'linear-mcp_echo']));
    await reading.client.close();
  });

  it('allowed_tools then disallowed_tools filter the catalog; a filtered tool cannot be called; an edit applies in place', async () => {
    await putServer(gateway, { name: 'Filtered', url: linear.url, allowed_tools: ['echo', 'add', 'ghost'], disallowed_tools: ['add'] });
    const [connected] = (await waitForConnected(gateway, ['filtered'])).filter((server) => server.slug === 'filtered');
    expect(connected).toMatchObject({
      tool_count: 1,
      excluded_tool_count: 3,
      allowed_tools: ['echo', 'add', 'ghost'],
      disallowed_tools: ['add'],
    });
    const pinned = await connectMcp(gateway, 'filtered');
    expect(await toolNames(pinned)).toEqual(['echo']);
    await expect(pinned.client.callTool({ name: 'add', arguments: { a: 1, b: 2 } })).rejects.toThrow(
      'tool is excluded by the gateway tool filters: "add"',
    );
    expect((await putVirtual(gateway, { name: 'filtered-bundle', servers: ['filtered'] })).status).toBe(200);
    const bundle = await connectMcp(gateway, 'filtered-bundle');
    expect(await toolNames(bundle)).toEqual(['echo']);
    await expect(bundle.client.callTool({ name: 'filtered_whoami', arguments: {} })).rejects.toThrow(
      'excluded by the gateway tool filters',
    );
    await expect(bundle.client.callTool({ name: 'whoami', arguments: {} })).rejects.toThrow('excluded by the gateway tool filters');

    const catalog = await call(gateway, '/admin/mcp-servers/filtered/catalog');
    expect(catalog.status, catalog.text).toBe(200);
    const body = JSON.parse(catalog.text) as { tools: Array<{ name: string }>; excluded_tools: Array<{ name: string }> };
    expect(body.tools.map((tool) => tool.name)).toEqual(['echo']);
    expect(body.excluded_tools.map((tool) => tool.name)).toEqual(['add', 'fail', 'whoami']);

    // Clearing the filters keeps the upstream session (same connected_at) and reaches open sessions.
    await putServer(gateway, { slug: 'filtered', url: linear.url, allowed_tools: [], disallowed_tools: null });
    const after = await viewOf(gateway, 'filtered');
    expect(after).toMatchObject({ tool_count: 4, excluded_tool_count: 0, connected_at: connected?.['connected_at'] });
    expect(await toolNames(pinned)).toEqual(['add', 'echo', 'fail', 'whoami']);
    expect(textOf(await pinned.client.callTool({ name: 'add', arguments: { a: 1, b: 2 } }))).toBe('linear: 3');
    await Promise.all([pinned.client.close(), bundle.client.close()]);
  });

  it('user_paths: a scoped server is seen only at or below its paths, on pinned, virtual and aggregate endpoints and in search', async () => {
    await putServer(gateway, { name: 'Team A Tools', url: docs.url, user_paths: ['/team-a'] });
    await waitForConnected(gateway, ['team-a-tools']);
    const inside = await connectMcp(gateway, 'team-a-tools', onPath('/Team-A/dev'));
    expect(await toolNames(inside)).toEqual(['create_issue', 'echo', 'list_issues']);
    await inside.client.close();
    const outside: Array<Record<string, string>> = [{ 'x-user-path': '/team-ab' }, { 'x-user-path': '/team-b' }, {}];
    for (const headers of outside) {
      const hidden = await rawMcpPost(gateway, '/mcp/team-a-tools', { id: 1, method: 'tools/list' }, headers);
      const error = expectEnvelope(hidden, { status: 404, type: 'not_found_error', code: 'mcp_endpoint_not_found' });
      expect(error.message).toBe('unknown MCP server or virtual server: team-a-tools');
    }

    expect((await putVirtual(gateway, { name: 'mixed', servers: ['team-a-tools', 'linear-mcp'] })).status).toBe(200);
    const outsider = await connectMcp(gateway, 'mixed', onPath('/team-b'));
    expect((await toolNames(outsider)).filter((name) => name.startsWith('team-a-tools_'))).toEqual([]);
    await expect(outsider.client.callTool({ name: 'team-a-tools_echo', arguments: { text: 'x' } })).rejects.toThrow('unknown tool');
    const member = await connectMcp(gateway, 'mixed', onPath('/team-a'));
    expect(await toolNames(member)).toContain('team-a-tools_echo');
    const aggregateOut = await connectMcp(gateway, '', onPath('/team-b'));
    expect((await toolNames(aggregateOut)).some((name) => name.startsWith('team-a-tools_') || name.startsWith('cfg_'))).toBe(false);
    const aggregateIn = await connectMcp(gateway, '', onPath('/team-a'));
    expect(await toolNames(aggregateIn)).toEqual(expect.arrayContaining(['team-a-tools_create_issue', 'cfg_echo', 'cfg_list_issues']));
    expect(await toolNames(aggregateIn)).not.toContain('cfg_create_issue');
    const search = await connectMcp(gateway, 'mixed', { headers: { 'x-user-path': '/team-b', 'x-mcp-tool-discovery': 'search' } });
    const found = await search.client.callTool({ name: 'search_tools', arguments: { query: 'create issue tracker', limit: 20 } });
    expect(textOf(found)).not.toContain('team-a-tools_');

    // A scope edit reaches open sessions at once.
    await putServer(gateway, { slug: 'team-a-tools', url: docs.url, user_paths: ['/team-b'] });
    expect(await toolNames(member)).not.toContain('team-a-tools_echo');
    await expect(member.client.callTool({ name: 'team-a-tools_echo', arguments: { text: 'x' } })).rejects.toThrow('unknown tool');
    expect(await toolNames(outsider)).toContain('team-a-tools_echo');
    await Promise.all([outsider, member, aggregateOut, aggregateIn, search].map((connection) => connection.client.close()));
  });

  it('tool_timeout_seconds bounds each call', async () => {
    const saved = await putServer(gateway, { name: 'Slow', url: slow.url, tool_timeout_seconds: 1 });
    expect(JSON.parse(saved.text)).toMatchObject({ slug: 'slow', tool_timeout_seconds: 1 });
    await waitForConnected(gateway, ['slow']);
    const pinned = await connectMcp(gateway, 'slow');
    expect(textOf(await pinned.client.callTool({ name: 'sleep', arguments: { ms: 50 } }))).toBe('slow: slept 50 ms');
    const started = Date.now();
    await expect(pinned.client.callTool({ name: 'sleep', arguments: { ms: 5_000 } })).rejects.toThrow(/timed out/i);
    expect(Date.now() - started).toBeLessThan(4_000);
    // An update that leaves the timeout out keeps it.
    await putServer(gateway, { slug: 'slow', url: slow.url, description: 'slow one' });
    expect(await viewOf(gateway, 'slow')).toMatchObject({ tool_timeout_seconds: 1, description: 'slow one', name: 'Slow' });
    await pinned.client.close();
  });

  it('POST reconnect redials and returns the fresh view, 200 even when the upstream is down; 404 unknown', async () => {
    const before = await viewOf(gateway, 'linear-mcp');
    const reconnected = await call(gateway, '/admin/mcp-servers/linear-mcp/reconnect', { method: 'POST' });
    expect(reconnected.status, reconnected.text).toBe(200);
    const view = JSON.parse(reconnected.text) as ServerView;
    expect(view).toMatchObject({ slug: 'linear-mcp', status: 'connected', last_error: null, tool_count: 4 });
    expect(Date.parse(String(view['connected_at']))).toBeGreaterThan(Date.parse(String(before['connected_at'])));
    const config = await call(gateway, '/admin/mcp-servers/CFG/reconnect', { method: 'POST', body: {} });
    expect(JSON.parse(config.text)).toMatchObject({ slug: 'cfg', status: 'connected', managed: false });

    await putServer(gateway, { name: 'Down', url: `http://127.0.0.1:${await closedPort()}/mcp` });
    const down = await call(gateway, '/admin/mcp-servers/down/reconnect', { method: 'POST' });
    expect(down.status, down.text).toBe(200);
    expect(JSON.parse(down.text)).toMatchObject({ slug: 'down', status: 'error', last_error: expect.stringMatching(/ECONNREFUSED/) });

    await putServer(gateway, { slug: 'down', enabled: false, url: `http://127.0.0.1:${await closedPort()}/mcp` });
    const disabled = await call(gateway, '/admin/mcp-servers/down/reconnect', { method: 'POST' });
    expect(JSON.parse(disabled.text)).toMatchObject({ status: 'disabled', last_error: null });

    const unknown = await call(gateway, '/admin/mcp-servers/ghost/reconnect', { method: 'POST' });
    expectEnvelope(unknown, { status: 404, type: 'not_found_error', code: 'mcp_server_not_found' });
  });

  it('GET catalog lists tools, excluded tools, prompts, resources and templates under upstream names; 404 unknown', async () => {
    const reply = await call(gateway, '/admin/mcp-servers/linear-mcp/catalog');
    expect(reply.status, reply.text).toBe(200);
    expect(JSON.parse(reply.text)).toEqual({
      server: 'linear-mcp',
      status: 'connected',
      instructions: 'Linear tools.',
      tools: [
        { name: 'add', description: 'Add two numbers and return the sum.' },
        { name: 'echo', description: 'Echo the text back (linear).' },
        { name: 'fail', description: 'Always fails with a tool error.' },
        { name: 'whoami', description: 'Report the credentials the server received.' },
      ],
      excluded_tools: [],
      prompts: [{ name: 'greeting', description: 'Greet someone.' }],
      resources: [{ uri: 'fixture://linear/readme', name: 'readme', description: 'The fixture readme.' }],
      templates: [],
    });
    const disabled = JSON.parse((await call(gateway, '/admin/mcp-servers/down/catalog')).text) as Record<string, unknown>;
    expect(disabled).toEqual({
      server: 'down',
      status: 'disabled',
      tools: [],
      excluded_tools: [],
      prompts: [],
      resources: [],
      templates: [],
    });
    const unknown = await call(gateway, '/admin/mcp-servers/ghost/catalog');
    expectEnvelope(unknown, { status: 404, type: 'not_found_error', code: 'mcp_server_not_found' });
    expectEnvelope(await call(gateway, '/admin/mcp-servers/linear-mcp/catalog', { token: null }), {
      status: 401,
      type: 'authentication_error',
    });
  });
});
