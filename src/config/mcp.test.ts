import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { thrown } from '../testing/thrown.ts';
import { ConfigError } from '../errors/config-error.ts';
import { defaultServerSettings } from '../mcp/mcp-server-fields.ts';
import { loadSettings } from './load.ts';

const load = (env: Record<string, string> = {}, yaml?: string) => {
  const directory = mkdtempSync(join(tmpdir(), 'mcp-config-test-'));
  if (yaml !== undefined) writeFileSync(join(directory, 'config.yaml'), yaml);
  return loadSettings({ argv: [], env, cwd: directory });
};

const configError = (env: Record<string, string>, yaml?: string): ConfigError => {
  return thrown(ConfigError, () => load(env, yaml));
};

const yaml = `
mcp:
  servers:
    GitHub:
      url: https://mcp.example.com/github
      headers: { Authorization: "Bearer \${GH_TOKEN}" }
      description: "  Code hosting "
    local:
      command: node
      args: [server.mjs, --verbose]
      env: { LEVEL: 3 }
    legacy:
      url: http://127.0.0.1:9000/sse
      transport: SSE
  virtual_servers:
    Coding:
      description: Tools for coding
      servers: ["GitHub", " local ", "github", ""]
      tool_discovery: Search
`;

describe('MCP settings', () => {
  it('defaults to enabled, discovery off, nothing declared', () => {
    const transport = { allowedOrigins: [], allowedHosts: [], eventStore: 'memory', redisUrl: null };
    const upstreamSessions = { maxPerServer: 100, idleSeconds: 300 };
    expect(load().settings.mcp).toEqual({
      enabled: true,
      toolDiscovery: 'off',
      ...transport,
      servers: [],
      virtualServers: [],
      upstreamSessions,
    });
    expect(
      load({ MCP_MAX_UPSTREAM_SESSIONS_PER_SERVER: '4', MCP_UPSTREAM_SESSION_IDLE_SECONDS: '60' }).settings.mcp.upstreamSessions,
    ).toEqual({ maxPerServer: 4, idleSeconds: 60 });
    expect(() => load({ MCP_MAX_UPSTREAM_SESSIONS_PER_SERVER: '0' })).toThrow('MCP_MAX_UPSTREAM_SESSIONS_PER_SERVER');
    expect(load({ MCP_ALLOWED_ORIGINS: 'https://App.example.com/, *' }).settings.mcp.allowedOrigins).toEqual([
      'https://app.example.com',
      '*',
    ]);
    expect(load({ MCP_TOOL_DISCOVERY: 'SEARCH' }).settings.mcp.toolDiscovery).toBe('search');
    expect(load({ MCP_ENABLED: 'false' }, yaml).settings.mcp).toEqual({
      enabled: false,
      toolDiscovery: 'off',
      ...transport,
      servers: [],
      virtualServers: [],
      upstreamSessions: { maxPerServer: 100, idleSeconds: 300 },
    });
  });

  it('reads MCP_ALLOWED_HOSTS and MCP_EVENT_STORE; the event store is redis by default when REDIS_URL is set', () => {
    expect(load({ MCP_ALLOWED_HOSTS: 'Gateway.example.com, 10.0.0.5:4000' }).settings.mcp.allowedHosts).toEqual([
      'gateway.example.com',
      '10.0.0.5:4000',
    ]);
    const redisUrl = 'redis://127.0.0.1:6379';
    expect(load({ REDIS_URL: redisUrl }).settings.mcp).toMatchObject({ eventStore: 'redis', redisUrl });
    expect(load({ REDIS_URL: redisUrl, MCP_EVENT_STORE: 'memory' }).settings.mcp).toMatchObject({ eventStore: 'memory', redisUrl: null });
    expect(() => load({ MCP_EVENT_STORE: 'redis' })).toThrow(/MCP_EVENT_STORE.*REDIS_URL/);
    expect(() => load({ MCP_EVENT_STORE: 'disk' })).toThrow(/MCP_EVENT_STORE/);
  });

  it('reads servers and virtual servers from YAML, canonical and sorted', () => {
    const { mcp } = load({ GH_TOKEN: 'secret' }, yaml).settings;
    expect(mcp.servers).toEqual([
      {
        slug: 'github',
        ...defaultServerSettings,
        description: 'Code hosting',
        transport: 'http',
        url: 'https://mcp.example.com/github',
        headers: { Authorization: 'Bearer secret' },
        command: null,
        args: [],
        env: {},
      },
      {
        slug: 'legacy',
        ...defaultServerSettings,
        description: '',
        transport: 'sse',
        url: 'http://127.0.0.1:9000/sse',
        headers: {},
        command: null,
        args: [],
        env: {},
      },
      {
        slug: 'local',
        ...defaultServerSettings,
        description: '',
        transport: 'stdio',
        url: null,
        headers: {},
        command: 'node',
        args: ['server.mjs', '--verbose'],
        env: { LEVEL: '3' },
      },
    ]);
    expect(mcp.virtualServers).toEqual([
      { name: 'coding', description: 'Tools for coding', servers: ['github', 'local'], toolDiscovery: 'search' },
    ]);
  });

  it('MCP_SERVERS and MCP_VIRTUAL_SERVERS replace YAML entries by canonical name and add new ones', () => {
    const env = {
      TOKEN: 't',
      MCP_SERVERS: JSON.stringify({
        github: { url: 'https://other.example/mcp', headers: { 'X-Key': '${TOKEN}' } },
        extra: { url: 'http://127.0.0.1:1/mcp' },
      }),
      MCP_VIRTUAL_SERVERS: JSON.stringify({ coding: { servers: ['extra'] }, more: { servers: 'github, extra', tool_discovery: 'off' } }),
    };
    const { mcp } = load(env, yaml).settings;
    expect(mcp.servers.map((server) => `${server.slug} ${server.url ?? server.command}`)).toEqual([
      'extra http://127.0.0.1:1/mcp',
      'github https://other.example/mcp',
      'legacy http://127.0.0.1:9000/sse',
      'local node',
    ]);
    expect(mcp.servers[1]?.headers).toEqual({ 'X-Key': 't' });
    expect(mcp.virtualServers).toEqual([
      { name: 'coding', description: '', servers: ['extra'], toolDiscovery: '' },
      { name: 'more', description: '', servers: ['github', 'extra'], toolDiscovery: 'off' },
    ]);
  });

  it('also accepts lists of declarations that carry their name', () => {
    const env = {
      MCP_SERVERS: JSON.stringify([{ slug: 'One', url: 'http://127.0.0.1:1/mcp' }]),
      MCP_VIRTUAL_SERVERS: JSON.stringify([{ name: 'Both', servers: ['one', 'two'] }]),
    };
    const { mcp } = load(env, 'mcp:\n  servers:\n    - { name: two, command: node }\n').settings;
    expect(mcp.servers.map((server) => `${server.slug}:${server.transport}`)).toEqual(['one:http', 'two:stdio']);
    expect(mcp.virtualServers).toEqual([{ name: 'both', description: '', servers: ['one', 'two'], toolDiscovery: '' }]);
  });

  it('reads display names, enabled, tool filters, user-path scopes and tool timeouts', () => {
    const document = `
mcp:
  servers:
    github:
      name: "GitHub Tools ✓"
      url: http://127.0.0.1:1/mcp
      enabled: false
      allowed_tools: [create_issue, list_issues]
      disallowed_tools: [list_issues]
      user_paths: [/team-b/, /team-a]
      tool_timeout: 1m30s
    plain: { url: "http://127.0.0.1:2/mcp" }
`;
    const env = {
      MCP_SERVERS: JSON.stringify([
        { name: 'Linear MCP', url: 'http://127.0.0.1:3/mcp', tool_timeout_seconds: 5 },
        { name: 'Team Docs', slug: 'docs', url: 'http://127.0.0.1:4/mcp', user_paths: ['/docs'] },
      ]),
    };
    const servers = load(env, document).settings.mcp.servers;
    const settingsOf = (slug: string) => {
      const server = servers.find((candidate) => candidate.slug === slug);
      return (
        server && [server.name, server.enabled, server.allowedTools, server.disallowedTools, server.userPaths, server.toolTimeoutSeconds]
      );
    };
    expect(servers.map((server) => server.slug)).toEqual(['docs', 'github', 'linear-mcp', 'plain']);
    expect(settingsOf('github')).toEqual([
      'GitHub Tools ✓',
      false,
      ['create_issue', 'list_issues'],
      ['list_issues'],
      ['/team-a', '/team-b'],
      90,
    ]);
    expect(settingsOf('plain')).toEqual(['', true, [], [], [], 30]);
    expect(settingsOf('linear-mcp')).toEqual(['Linear MCP', true, [], [], [], 5]);
    expect(settingsOf('docs')).toEqual(['Team Docs', true, [], [], ['/docs'], 30]);
  });

  it('a virtual server named like a server is accepted with a warning', () => {
    const { warnings } = load(
      {},
      'mcp:\n  servers:\n    x: { url: "http://127.0.0.1:1/mcp" }\n  virtual_servers:\n    x: { servers: [x] }\n',
    );
    expect(warnings).toContain('virtual MCP server "x" is not served: MCP server "x" uses the same name; rename one of them');
  });

  it.each([
    [{ MCP_TOOL_DISCOVERY: 'semantic' }, undefined, 'MCP_TOOL_DISCOVERY', 'tool_discovery must be "off" or "search", got "semantic"'],
    [{ MCP_ENABLED: 'maybe' }, undefined, 'MCP_ENABLED', 'MCP_ENABLED: '],
    [{ MCP_SERVERS: '{' }, undefined, 'MCP_SERVERS', 'not valid JSON'],
    [{ MCP_SERVERS: '"x"' }, undefined, 'MCP_SERVERS', 'expected a JSON object'],
    [{ MCP_SERVERS: '[{"url":"http://h/"}]' }, undefined, 'MCP_SERVERS.0.name', 'name is required'],
    [
      { MCP_SERVERS: '{"A":{"url":"http://h/"},"a":{"url":"http://h/"}}' },
      undefined,
      'MCP_SERVERS',
      'both canonicalize to server slug "a"',
    ],
    [{ MCP_VIRTUAL_SERVERS: '{"v":{}}' }, undefined, 'MCP_VIRTUAL_SERVERS.v.servers', 'servers is required'],
    [{}, 'mcp:\n  servers:\n    "git hub": { url: "http://h/" }\n', 'mcp.servers.git hub', 'must match'],
    [{}, 'mcp:\n  servers:\n    s: { url: "ftp://h/" }\n', 'mcp.servers.s.url', 'url must start with http:// or https://'],
    [{}, 'mcp:\n  servers:\n    s: { transport: http }\n', 'mcp.servers.s.url', 'url is required for the http transport'],
    [
      {},
      'mcp:\n  servers:\n    s: { transport: ws, url: "http://h/" }\n',
      'mcp.servers.s.transport',
      'transport must be one of: http, sse, stdio',
    ],
    [{}, 'mcp:\n  servers:\n    s: { transport: stdio }\n', 'mcp.servers.s.command', 'command is required for the stdio transport'],
    [{}, 'mcp:\n  servers:\n    s: { command: node, headers: { A: b } }\n', 'mcp.servers.s.headers', 'only valid for the http and sse'],
    [{}, 'mcp:\n  servers:\n    s: { url: "http://h/", command: node }\n', 'mcp.servers.s.command', 'only valid for the stdio transport'],
    [{}, 'mcp:\n  servers:\n    s: { url: "http://h/", colour: red }\n', 'mcp.servers.s.colour', 'unknown field'],
    [
      {},
      'mcp:\n  virtual_servers:\n    "my tools": { servers: [a] }\n',
      'mcp.virtual_servers.my tools',
      'virtual server name "my tools" must match',
    ],
    [
      {},
      'mcp:\n  virtual_servers:\n    v: { servers: ["git hub"] }\n',
      'mcp.virtual_servers.v.servers.0',
      'member "git hub": server slug "git hub" must match',
    ],
    [
      {},
      'mcp:\n  virtual_servers:\n    v: { servers: [a], tool_discovery: semantic }\n',
      'mcp.virtual_servers.v.tool_discovery',
      'got "semantic"',
    ],
    [
      {},
      'mcp:\n  virtual_servers:\n    v: { servers: [w] }\n    w: { servers: [a] }\n',
      'mcp.virtual_servers.v.servers.0',
      'member "w" is a virtual server',
    ],
    [{}, 'mcp:\n  servers:\n    s: { url: "http://h/", tool_timeout: -1s }\n', 'mcp.servers.s.tool_timeout', 'must not be negative'],
    [{}, 'mcp:\n  servers:\n    s: { url: "http://h/", user_paths: [/a/../b] }\n', 'mcp.servers.s.user_paths.0', 'invalid user_paths'],
    [{}, 'mcp:\n  servers:\n    s: { url: "http://h/", enabled: maybe }\n', 'mcp.servers.s.enabled', 'enabled must be a boolean'],
    [{}, 'mcp:\n  servers: 3\n', 'mcp.servers', 'expected a mapping'],
    [{}, 'mcp:\n  servers: [a]\n', 'mcp.servers.0', 'expected a declaration object'],
  ])('rejects %j %j at %s', (env, document, key, message) => {
    const error = configError(env, document);
    expect(error.key).toBe(key);
    expect(error.message).toContain(message);
  });
});
