import { resolve } from 'node:path';

import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { rejectionOf } from '../support/clients.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { call } from '../support/http.ts';
import { connectMcp, type McpConnection, rawMcpPost, textOf, waitForConnected } from '../support/mcp.ts';
import { type McpFixture, startMcpFixture, startMcpSseFixture } from '../support/mcp-fixture-server.ts';

// CONTRACT section 9: /mcp/{name} over MCP Streamable HTTP, with real MCP servers written with the
// SDK behind the gateway (two over HTTP, one over stdio) and the SDK's client in front.

const stdioScript = resolve(import.meta.dirname, '..', 'support', 'mcp-stdio-server.mjs');

describe('MCP gateway: pinned, virtual and search endpoints', () => {
  let alpha: McpFixture;
  let beta: McpFixture;
  let legacy: McpFixture;
  let gateway: GatewayProcess;
  const connections: McpConnection[] = [];

  const connect = async (name: string, options: Parameters<typeof connectMcp>[2] = {}): Promise<McpConnection> => {
    const connection = await connectMcp(gateway, name, options);
    connections.push(connection);
    return connection;
  };

  beforeAll(async () => {
    alpha = await startMcpFixture({ label: 'alpha', tools: ['echo', 'add', 'whoami', 'fail'], instructions: 'Alpha does arithmetic.' });
    beta = await startMcpFixture({ label: 'beta', tools: ['echo', 'create_issue', 'list_issues'] });
    legacy = await startMcpSseFixture({ label: 'legacy', tools: ['echo', 'whoami'] });
    const configYaml = `
mcp:
  servers:
    alpha:
      url: ${alpha.url}
      headers: { X-Fixture-Token: "\${FIXTURE_TOKEN}" }
      description: Alpha fixture
    beta:
      url: ${beta.url}
    legacy:
      url: ${legacy.url}
      transport: sse
      headers: { X-Fixture-Token: sse-token }
    local:
      command: ${JSON.stringify(process.execPath)}
      args: [${JSON.stringify(stdioScript)}]
      env: { FIXTURE_MODE: stdio }
  virtual_servers:
    coding:
      description: Alpha and beta
      servers: [alpha, beta, ghost]
    finder:
      servers: [alpha, beta]
      tool_discovery: search
    beta:
      servers: [alpha]
`;
    gateway = await startGateway({
      configYaml,
      env: {
        MASTER_KEY,
        MCP_ALLOWED_ORIGINS: 'https://app.example',
        FIXTURE_TOKEN: 'tok-123',
        OPENAI_API_KEY: 'sk-secret-upstream',
        OPENAI_BASE_URL: 'http://127.0.0.1:9/v1',
      },
    });
    await waitForConnected(gateway, ['alpha', 'beta', 'legacy', 'local']);
  });

  afterAll(async () => {
    await Promise.all(connections.map(({ client }) => client.close().catch(() => undefined)));
    await gateway?.stop();
    await alpha?.close();
    await beta?.close();
    await legacy?.close();
  });

  it('a pinned server keeps its own tool names and relays calls, tool errors, prompts and resources', async () => {
    const { client } = await connect('alpha');
    expect(client.getServerVersion()?.name).toBe('model-gateway');
    expect(client.getInstructions()).toBe('Alpha does arithmetic.');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['add', 'echo', 'fail', 'whoami']);
    expect(tools[0]).toMatchObject({ title: 'Add numbers', inputSchema: { type: 'object', required: ['a', 'b'] } });
    expect(textOf(await client.callTool({ name: 'add', arguments: { a: 2, b: 40 } }))).toBe('alpha: 42');
    const failed = await client.callTool({ name: 'fail', arguments: {} });
    expect(failed.isError).toBe(true);
    expect(textOf(failed)).toBe('alpha: failed on purpose');
    const prompts = await client.listPrompts();
    expect(prompts.prompts.map((prompt) => prompt.name)).toEqual(['greeting']);
    const prompt = await client.getPrompt({ name: 'greeting', arguments: { name: 'Ada' } });
    expect(prompt.messages[0]?.content).toEqual({ type: 'text', text: 'Hello Ada, from alpha' });
    const { resources } = await client.listResources();
    expect(resources.map((resource) => resource.uri)).toEqual(['fixture://alpha/readme']);
    const read = await client.readResource({ uri: 'fixture://alpha/readme' });
    expect(read.contents[0]).toMatchObject({ uri: 'fixture://alpha/readme', text: 'readme of alpha' });
  });

  it('sends the configured headers upstream and never the client credential', async () => {
    const { client } = await connect('alpha');
    const seen = JSON.parse(textOf(await client.callTool({ name: 'whoami', arguments: {} }))) as Record<string, unknown>;
    expect(seen).toEqual({ label: 'alpha', authorization: null, token: 'tok-123' });
    expect(alpha.requests.every((request) => request.headers['authorization'] === undefined)).toBe(true);
  });

  it('a virtual server lists unique names bare and shared ones namespaced, skips a missing member and relays both forms', async () => {
    const { client } = await connect('coding');
    expect(client.getInstructions()).toContain('virtual server "coding" aggregating 2 server(s): alpha, beta.');
    expect(client.getInstructions()).toContain('## alpha\nAlpha does arithmetic.');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['add', 'alpha_echo', 'fail', 'whoami', 'create_issue', 'beta_echo', 'list_issues']);
    expect(textOf(await client.callTool({ name: 'beta_echo', arguments: { text: 'hi' } }))).toBe('beta: hi');
    expect(textOf(await client.callTool({ name: 'alpha_echo', arguments: { text: 'hi' } }))).toBe('alpha: hi');
    expect(textOf(await client.callTool({ name: 'add', arguments: { a: 1, b: 2 } }))).toBe('alpha: 3');
    expect(textOf(await client.callTool({ name: 'alpha_add', arguments: { a: 2, b: 2 } }))).toBe('alpha: 4');
    expect(textOf(await client.callTool({ name: 'create_issue', arguments: { title: 'Bug' } }))).toBe('beta: created issue "Bug"');
    const prompts = await client.listPrompts();
    expect(prompts.prompts.map((prompt) => prompt.name)).toEqual(['alpha_greeting', 'beta_greeting']);
    const prompt = await client.getPrompt({ name: 'beta_greeting', arguments: { name: 'Bo' } });
    expect(prompt.messages[0]?.content).toEqual({ type: 'text', text: 'Hello Bo, from beta' });
    const read = await client.readResource({ uri: 'fixture://beta/readme' });
    expect(read.contents[0]).toMatchObject({ text: 'readme of beta' });
  });

  it('an ambiguous bare name or an unknown tool is a JSON-RPC error naming the choices', async () => {
    const { client } = await connect('coding');
    const ambiguous = await rejectionOf(client.callTool({ name: 'echo', arguments: { text: 'x' } }));
    expect(ambiguous).toBeInstanceOf(McpError);
    expect((ambiguous as McpError).message).toContain('tool name "echo" is ambiguous: call one of alpha_echo, beta_echo');
    const unknown = await rejectionOf(client.callTool({ name: 'local_shout', arguments: { text: 'x' } }));
    expect((unknown as McpError).message).toContain('unknown tool "local_shout"');
  });

  it('search mode lists only search_tools and call_tool; call_tool runs the real tool', async () => {
    const { client } = await connect('finder');
    expect(client.getInstructions()).toContain('find them with search_tools and run them with call_tool');
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['call_tool', 'search_tools']);
    expect(tools[1]?.description).toContain('Servers: alpha (4), beta (3).');
    const found = JSON.parse(textOf(await client.callTool({ name: 'search_tools', arguments: { query: 'create issue' } }))) as {
      tools: Array<{ name: string; inputSchema: unknown }>;
    };
    expect(found.tools[0]?.name).toBe('create_issue');
    expect(found.tools[0]?.inputSchema).toMatchObject({ type: 'object', properties: { title: { type: 'string' } } });
    const created = await client.callTool({ name: 'call_tool', arguments: { name: 'beta_create_issue', arguments: { title: 'Found' } } });
    expect(textOf(created)).toBe('beta: created issue "Found"');
    const bare = await client.callTool({ name: 'call_tool', arguments: { name: 'add', arguments: '{"a": 20, "b": 22}' } });
    expect(textOf(bare)).toBe('alpha: 42');
    const none = await client.callTool({ name: 'search_tools', arguments: { query: 'weather forecast' } });
    expect(textOf(none)).toBe('No tools matched "weather forecast". Try fewer or broader keywords.');
    const unknown = await client.callTool({ name: 'call_tool', arguments: { name: 'nope' } });
    expect(unknown.isError).toBe(true);
    expect(textOf(unknown)).toBe('unknown tool "nope"; use search_tools to find tool names');
    const blank = await client.callTool({ name: 'search_tools', arguments: { query: ' ' } });
    expect(blank).toMatchObject({ isError: true, content: [{ text: 'query is required' }] });
  });

  it('X-MCP-Tool-Discovery switches a pinned session to search mode, where names stay original', async () => {
    const { client } = await connect('alpha', { headers: { 'X-MCP-Tool-Discovery': 'Search' } });
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['call_tool', 'search_tools']);
    const found = JSON.parse(textOf(await client.callTool({ name: 'search_tools', arguments: { query: 'add', limit: 1 } }))) as {
      tools: Array<{ name: string }>;
    };
    expect(found.tools.map((tool) => tool.name)).toEqual(['add']);
  });

  it('a stdio server is spawned with a minimal environment and served like the others', async () => {
    const { client } = await connect('local');
    expect(client.getInstructions()).toBe('A local stdio fixture.');
    expect(textOf(await client.callTool({ name: 'shout', arguments: { text: 'quiet' } }))).toBe('stdio: QUIET');
    const names = JSON.parse(textOf(await client.callTool({ name: 'environment', arguments: {} }))) as string[];
    expect(names).toContain('FIXTURE_MODE');
    expect(names).toContain('PATH');
    for (const secret of ['MASTER_KEY', 'OPENAI_API_KEY', 'FIXTURE_TOKEN', 'PORT']) expect(names).not.toContain(secret);
  });

  it('sessions share the one process of a stdio server (no process per session)', async () => {
    const first = await connect('local');
    const second = await connect('local');
    const pid = textOf(await first.client.callTool({ name: 'pid', arguments: {} }));
    expect(pid).toMatch(/^\d+$/);
    expect(textOf(await second.client.callTool({ name: 'pid', arguments: {} }))).toBe(pid);
  });

  it('relays to a server over the legacy SSE transport, with its headers', async () => {
    const { client } = await connect('legacy');
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['echo', 'whoami']);
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'old' } }))).toBe('legacy: old');
    const seen = JSON.parse(textOf(await client.callTool({ name: 'whoami', arguments: {} }))) as Record<string, unknown>;
    expect(seen).toMatchObject({ authorization: null, token: 'sse-token' });
  });

  it('/mcp aggregates every server namespaced', async () => {
    const { client } = await connect('');
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['alpha_add', 'beta_create_issue', 'local_shout', 'local_environment']));
    expect(textOf(await client.callTool({ name: 'local_shout', arguments: { text: 'a' } }))).toBe('stdio: A');
  });

  it('a real server keeps a name a virtual server also uses', async () => {
    const { client } = await connect('beta');
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['create_issue', 'echo', 'list_issues']);
  });

  it('rejects unknown endpoints, missing credentials and requests without a session', async () => {
    const unknown = await rawMcpPost(gateway, '/mcp/ghost', { id: 1, method: 'tools/list' }, {});
    expectEnvelope(unknown, { status: 404, type: 'not_found_error', code: 'mcp_endpoint_not_found' });
    expect(JSON.parse(unknown.text).error.message).toBe('unknown MCP server or virtual server: ghost');
    const anonymous = await rawMcpPost(gateway, '/mcp/alpha', { id: 1, method: 'tools/list' }, {}, null);
    expectEnvelope(anonymous, { status: 401, type: 'authentication_error', code: 'missing_credentials' });
    const wrongKey = await rawMcpPost(gateway, '/mcp/alpha', { id: 1, method: 'tools/list' }, {}, 'not-a-key');
    expectEnvelope(wrongKey, { status: 401, type: 'authentication_error', code: 'invalid_credentials' });
    const sessionless = await rawMcpPost(gateway, '/mcp/alpha', { id: 1, method: 'tools/list' }, {});
    expectEnvelope(sessionless, { status: 400, type: 'invalid_request_error', code: 'missing_field', param: 'Mcp-Session-Id' });
    const foreign = await rawMcpPost(gateway, '/mcp/alpha', { id: 1, method: 'tools/list' }, { origin: 'https://attacker.example' });
    expectEnvelope(foreign, { status: 403, type: 'permission_error', code: 'origin_not_allowed' });
    const allowed = await rawMcpPost(gateway, '/mcp/alpha', { id: 1, method: 'tools/list' }, { origin: 'https://app.example' });
    expectEnvelope(allowed, { status: 400, type: 'invalid_request_error', code: 'missing_field' });
    const connection = await rejectionOf(connectMcp(gateway, 'alpha', { token: null }));
    expect(connection).toBeInstanceOf(StreamableHTTPError);
    expect((connection as StreamableHTTPError).code).toBe(401);
  });

  it('binds a session to its key, user path and endpoint: a replay with anything else is 404', async () => {
    const created = await call(gateway, '/admin/api-keys', { body: { name: 'mcp-replay' } });
    expect(created.status, created.text).toBe(201);
    const otherKey = (JSON.parse(created.text) as { key: string }).key;
    const { client, transport } = await connect('alpha', { headers: { 'X-User-Path': '/team' } });
    await client.listTools();
    const sessionId = transport.sessionId ?? '';
    expect(sessionId).not.toBe('');
    const list = { id: 7, method: 'tools/list' };
    const own = await rawMcpPost(gateway, '/mcp/alpha', list, { 'mcp-session-id': sessionId, 'x-user-path': '/team' });
    expect(own.status, own.text).toBe(200);
    for (const [path, headers, token] of [
      ['/mcp/alpha', { 'x-user-path': '/team' }, otherKey],
      ['/mcp/alpha', { 'x-user-path': '/other' }, MASTER_KEY],
      ['/mcp/coding', { 'x-user-path': '/team' }, MASTER_KEY],
    ] as const) {
      const replay = await rawMcpPost(gateway, path, list, { 'mcp-session-id': sessionId, ...headers }, token);
      expectEnvelope(replay, { status: 404, type: 'not_found_error', code: 'mcp_session_not_found' });
    }
    await transport.terminateSession();
    const ended = await rawMcpPost(gateway, '/mcp/alpha', list, { 'mcp-session-id': sessionId, 'x-user-path': '/team' });
    expectEnvelope(ended, { status: 404, type: 'not_found_error', code: 'mcp_session_not_found' });
  });

  it('each POST counts on the user path rate limits: the next one gets 429 with Retry-After', async () => {
    const rule = await call(gateway, '/admin/rate-limits', {
      method: 'PUT',
      body: { user_path: '/mcp-limited', limit_key: { period: 'minute' }, max_requests: 3 },
    });
    expect(rule.status, rule.text).toBe(200);
    // initialize and notifications/initialized are requests 1 and 2.
    const { client, transport } = await connect('alpha', { headers: { 'X-User-Path': '/mcp-limited/app' } });
    expect((await client.listTools()).tools).toHaveLength(4);
    const refused = await rejectionOf(client.callTool({ name: 'add', arguments: { a: 1, b: 1 } }));
    expect(refused).toBeInstanceOf(StreamableHTTPError);
    expect((refused as StreamableHTTPError).code).toBe(429);
    const raw = await rawMcpPost(
      gateway,
      '/mcp/alpha',
      { id: 9, method: 'tools/list' },
      { 'mcp-session-id': transport.sessionId ?? '', 'x-user-path': '/mcp-limited/app' },
    );
    const error = expectEnvelope(raw, { status: 429, type: 'rate_limit_error', code: 'rate_limit_exceeded', provider: 'ratelimit' });
    expect(error.message).toBe('rate limit exceeded for /mcp-limited: minute request limit of 3 reached');
    expect(Number(raw.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(raw.headers['x-ratelimit-remaining-requests']).toBe('0');
  });
});
