import { describe, expect, it } from 'vitest';
import type { McpServerRow, McpVirtualServerRow } from '../mcp/mcp-definitions.ts';
import { defaultServerSettings } from '../mcp/mcp-server-fields.ts';
import { postgresMigrations } from './postgres/migrations.ts';
import { sqliteMigrations } from './sqlite/migrations.ts';
import { baseTime, useFreshStorage } from './testing/fixtures.ts';
import { defaultTestDatabaseUrl, storageBackends } from './testing/storage-backends.ts';

const backends = storageBackends(process.env.DATABASE_URL_TEST ?? defaultTestDatabaseUrl);
const migrationsByBackend = { sqlite: sqliteMigrations, postgresql: postgresMigrations };
const mcpVersion = 6;

function server(slug: string, overrides: Partial<McpServerRow> = {}): McpServerRow {
  return {
    slug,
    ...defaultServerSettings,
    description: '',
    transport: 'http',
    url: `https://mcp.example.com/${slug}`,
    headers: {},
    command: null,
    args: [],
    env: {},
    createdAt: baseTime,
    updatedAt: baseTime,
    ...overrides,
  };
}

function virtual(name: string, overrides: Partial<McpVirtualServerRow> = {}): McpVirtualServerRow {
  return { name, description: '', servers: ['github'], toolDiscovery: '', createdAt: baseTime, updatedAt: baseTime, ...overrides };
}

describe.each(backends)('MCP stores conformance: $name', (backend) => {
  const fresh = useFreshStorage(backend);

  it('lists nothing at first', async () => {
    const { storage } = fresh();
    expect(await storage.mcpServers.list()).toEqual([]);
    expect(await storage.mcpVirtualServers.list()).toEqual([]);
  });

  it('round-trips servers exactly, sorted by slug in byte order', async () => {
    const { mcpServers } = fresh().storage;
    const github = server('github', {
      name: 'GitHub «Tools» ✓',
      enabled: false,
      allowedTools: ['create_issue', 'list_issues'],
      disallowedTools: ['delete_repo'],
      userPaths: ['/team-a', '/team-b/dev'],
      toolTimeoutSeconds: 2.5,
      description: 'Code — «hosting» ✓',
      headers: { Authorization: 'Bearer x"y', 'X-Team': 'a/b' },
      createdAt: 4_102_444_800_123,
      updatedAt: 4_102_444_800_456,
    });
    const legacy = server('legacy', { transport: 'sse', url: 'http://127.0.0.1:9000/sse' });
    const dashed = server('a-b');
    for (const row of [github, legacy, dashed, server('a_b'), server('ab')]) await mcpServers.upsert(row);
    const listed = await mcpServers.list();
    expect(listed.map((row) => row.slug)).toEqual(['a-b', 'a_b', 'ab', 'github', 'legacy']);
    expect(listed[3]).toEqual(github);
    expect(listed[4]).toEqual(legacy);
  });

  it('server upsert replaces by slug and keeps createdAt; remove reports whether a row was there', async () => {
    const { mcpServers } = fresh().storage;
    await mcpServers.upsert(server('github', { description: 'first' }));
    const replacement = server('github', {
      enabled: false,
      userPaths: ['/ops'],
      description: 'second',
      transport: 'sse',
      url: 'http://other/sse',
      headers: { A: 'b' },
      createdAt: baseTime + 5,
      updatedAt: baseTime + 5,
    });
    await mcpServers.upsert(replacement);
    expect(await mcpServers.list()).toEqual([{ ...replacement, createdAt: baseTime }]);
    expect(await mcpServers.remove('github')).toBe(true);
    expect(await mcpServers.remove('github')).toBe(false);
    expect(await mcpServers.list()).toEqual([]);
  });

  it('refuses to store a stdio server', async () => {
    const { mcpServers } = fresh().storage;
    await expect(mcpServers.upsert(server('local', { transport: 'stdio', url: null, command: 'node' }))).rejects.toThrow(
      /only http and sse/,
    );
  });

  it('round-trips virtual servers with member order, replaces by name, removes', async () => {
    const { mcpVirtualServers } = fresh().storage;
    const coding = virtual('coding', { description: 'Coding ✓', servers: ['zeta', 'alpha', 'mid'], toolDiscovery: 'search' });
    const research = virtual('research', { toolDiscovery: 'off' });
    await mcpVirtualServers.upsert(research);
    await mcpVirtualServers.upsert(coding);
    await mcpVirtualServers.upsert(virtual('a'));
    expect(await mcpVirtualServers.list()).toEqual([virtual('a'), coding, research]);
    const edited = virtual('coding', { servers: ['alpha'], createdAt: baseTime + 9, updatedAt: baseTime + 9 });
    await mcpVirtualServers.upsert(edited);
    expect((await mcpVirtualServers.list())[1]).toEqual({ ...edited, createdAt: baseTime });
    expect(await mcpVirtualServers.remove('coding')).toBe(true);
    expect(await mcpVirtualServers.remove('coding')).toBe(false);
    expect((await mcpVirtualServers.list()).map((row) => row.name)).toEqual(['a', 'research']);
  });

  it('a database at version 5 gains the MCP tables on reopen', async () => {
    const shipped = migrationsByBackend[backend.name];
    const location = await backend.createLocation();
    try {
      expect(await location.migrate(shipped.filter((migration) => migration.version < mcpVersion))).toEqual([1, 2, 3, 4, 5]);
      const storage = await location.open();
      try {
        expect(await location.appliedMigrations()).toContainEqual({ version: mcpVersion, name: 'mcp_servers' });
        expect(await location.appliedMigrations()).toContainEqual({ version: mcpVersion + 1, name: 'mcp_server_settings' });
        await storage.mcpServers.upsert(server('github'));
        await storage.mcpVirtualServers.upsert(virtual('coding'));
        expect(await storage.mcpServers.list()).toEqual([server('github')]);
        expect(await storage.mcpVirtualServers.list()).toEqual([virtual('coding')]);
      } finally {
        await storage.close();
      }
    } finally {
      await location.dispose();
    }
  });
});
