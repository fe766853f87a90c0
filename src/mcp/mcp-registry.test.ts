import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/gateway-error.ts';
import { rejected } from '../testing/thrown.ts';
import type {
  McpServerDefinition,
  McpServerRow,
  McpServerStore,
  McpVirtualServerDefinition,
  McpVirtualServerRow,
  McpVirtualServerStore,
} from './mcp-definitions.ts';
import { McpRegistry } from './mcp-registry.ts';
import { defaultServerSettings } from './mcp-server-fields.ts';

/** In-memory stores with the ports' semantics (ordered listing, createdAt kept by the caller). */
class MemoryStore<Row extends { createdAt: number }> {
  readonly rows = new Map<string, Row>();
  private readonly key: (row: Row) => string;

  constructor(key: (row: Row) => string) {
    this.key = key;
  }

  async list(): Promise<Row[]> {
    return [...this.rows.values()].sort((left, right) => (this.key(left) < this.key(right) ? -1 : 1));
  }

  async upsert(row: Row): Promise<void> {
    this.rows.set(this.key(row), row);
  }

  async remove(key: string): Promise<boolean> {
    return this.rows.delete(key);
  }
}

const server = (slug: string): McpServerDefinition => ({
  slug,
  ...defaultServerSettings,
  description: '',
  transport: 'http',
  url: `http://127.0.0.1:1/${slug}`,
  headers: {},
  command: null,
  args: [],
  env: {},
});

const virtual = (
  name: string,
  servers: string[],
  toolDiscovery: McpVirtualServerDefinition['toolDiscovery'] = '',
): McpVirtualServerDefinition => ({
  name,
  description: '',
  servers,
  toolDiscovery,
});

function registry(config: { servers?: McpServerDefinition[]; virtuals?: McpVirtualServerDefinition[] } = {}) {
  const serverStore = new MemoryStore<McpServerRow>((row) => row.slug);
  const virtualStore = new MemoryStore<McpVirtualServerRow>((row) => row.name);
  let now = 1_000;
  const instance = new McpRegistry({
    serverStore: serverStore satisfies McpServerStore,
    virtualStore: virtualStore satisfies McpVirtualServerStore,
    configServers: config.servers ?? [],
    configVirtualServers: config.virtuals ?? [],
    defaultToolDiscovery: 'search',
    logger: pino({ level: 'silent' }),
    now: () => (now += 1),
  });
  return { instance, serverStore, virtualStore };
}

describe('McpRegistry', () => {
  it('resolves endpoints: a server slug wins over a virtual server, which resolves with its effective discovery', async () => {
    const { instance } = registry({
      servers: [server('alpha'), server('beta')],
      virtuals: [virtual('beta', ['alpha']), virtual('v', ['alpha'], 'off')],
    });
    await instance.reload();
    expect(instance.resolveEndpoint('beta')).toEqual({ kind: 'server', name: 'beta', toolDiscovery: 'search' });
    expect(instance.resolveEndpoint('v')).toEqual({ kind: 'virtual', name: 'v', members: ['alpha'], toolDiscovery: 'off' });
    expect(instance.resolveEndpoint('')).toEqual({ kind: 'aggregate', name: '', members: ['alpha', 'beta'], toolDiscovery: 'search' });
    expect(instance.resolveEndpoint('ghost')).toBeNull();
    const shadowed = instance.virtualServer('beta');
    expect(shadowed && instance.conflictOf(shadowed)).toBe(
      'virtual MCP server "beta" is not served: MCP server "beta" uses the same name; rename one of them',
    );
  });

  it('configuration shadows stored rows; stored rows are managed and editable, configuration ones are read-only', async () => {
    const { instance, virtualStore } = registry({ servers: [server('alpha')], virtuals: [virtual('coding', ['alpha'])] });
    await virtualStore.upsert({ ...virtual('coding', ['other']), createdAt: 1, updatedAt: 1 });
    await virtualStore.upsert({ ...virtual('team', ['alpha', 'ghost']), createdAt: 1, updatedAt: 1 });
    await instance.reload();
    expect(instance.virtualServerList().map((entry) => [entry.name, entry.origin, entry.servers])).toEqual([
      ['coding', 'config', ['alpha']],
      ['team', 'manual', ['alpha', 'ghost']],
    ]);
    const team = instance.virtualServer('team');
    expect(team && instance.missingServers(team)).toEqual(['ghost']);
    const readOnly = await rejected(GatewayError, instance.upsertVirtualServer(virtual('coding', ['alpha'])));
    expect([readOnly.status, readOnly.code]).toEqual([409, 'mcp_virtual_server_read_only']);
    expect((await rejected(GatewayError, instance.removeVirtualServer('coding'))).status).toBe(409);
    expect((await rejected(GatewayError, instance.removeServer('alpha'))).code).toBe('mcp_server_read_only');
    expect((await rejected(GatewayError, instance.removeVirtualServer('nobody'))).code).toBe('mcp_virtual_server_not_found');
  });

  it('refuses nesting a virtual server, unless a real server has that slug', async () => {
    const { instance } = registry({ servers: [server('alpha')], virtuals: [virtual('coding', ['alpha']), virtual('alpha', ['alpha'])] });
    await instance.reload();
    const nested = await rejected(GatewayError, instance.upsertVirtualServer(virtual('outer', ['coding'])));
    expect([nested.status, nested.param, nested.message]).toEqual([
      400,
      'servers.0',
      'member "coding" is a virtual server; virtual servers can only include MCP servers',
    ]);
    expect((await rejected(GatewayError, instance.upsertVirtualServer(virtual('self', ['self'])))).param).toBe('servers.0');
    expect((await instance.upsertVirtualServer(virtual('ok', ['alpha', 'later']))).origin).toBe('manual');
  });

  it('tells listeners about server changes, keeps createdAt on edits, and picks up other replicas on reload', async () => {
    const { instance, serverStore } = registry();
    await instance.reload();
    const seen: string[][] = [];
    instance.onServersChanged((servers) => seen.push(servers.map((entry) => entry.slug)));
    const first = await instance.upsertServer(server('beta'));
    const edited = await instance.upsertServer({ ...server('beta'), description: 'edited' });
    expect(edited.createdAt).toBe(first.createdAt);
    expect(edited.updatedAt).toBeGreaterThan(first.updatedAt);
    await serverStore.upsert({ ...server('alpha'), createdAt: 5, updatedAt: 5 });
    await instance.reload();
    await instance.reload();
    await instance.removeServer('beta');
    expect(seen).toEqual([['beta'], ['beta'], ['alpha', 'beta'], ['alpha']]);
  });

  it('a reload that read the stores before a local write does not undo it', async () => {
    const { instance, serverStore } = registry();
    await instance.reload();
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const list = serverStore.list.bind(serverStore);
    serverStore.list = async () => {
      const rows = await list();
      await gate;
      return rows;
    };
    const reloading = instance.reload();
    await instance.upsertServer(server('fresh'));
    release();
    await reloading;
    expect(instance.serverList().map((entry) => entry.slug)).toEqual(['fresh']);
  });
});
