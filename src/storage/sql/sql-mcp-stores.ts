import type { McpServerRow, McpServerStore, McpVirtualServerRow, McpVirtualServerStore } from '../../mcp/mcp-definitions.ts';
import { parseServerSettings, type McpServerSettings } from '../../mcp/mcp-server-fields.ts';
import { parseToolDiscovery } from '../../mcp/mcp-validation.ts';
import type { SqlExecutor, SqlValue } from './sql-executor.ts';
import { SqlParameters, toNumber } from './sql-executor.ts';

const serverColumns = ['slug', 'description', 'transport', 'url', 'headers_json', 'settings_json', 'created_at', 'updated_at'] as const;
const virtualColumns = ['name', 'description', 'servers_json', 'tool_discovery', 'created_at', 'updated_at'] as const;

interface ServerTableRow {
  readonly slug: string;
  readonly description: string;
  readonly transport: string;
  readonly url: string;
  readonly headers_json: string;
  /** The server's settings (display name, enabled, filters, scopes, timeout) in their declaration form; `{}` for defaults. */
  readonly settings_json: string;
  readonly created_at: number | string;
  readonly updated_at: number | string;
}

interface VirtualTableRow {
  readonly name: string;
  readonly description: string;
  readonly servers_json: string;
  readonly tool_discovery: string;
  readonly created_at: number | string;
  readonly updated_at: number | string;
}

/** Admin-managed MCP servers (http and sse only) over any SQL dialect; listed by slug in byte order. */
export class SqlMcpServerStore implements McpServerStore {
  readonly #executor: SqlExecutor;

  constructor(executor: SqlExecutor) {
    this.#executor = executor;
  }

  async list(): Promise<McpServerRow[]> {
    const rows = await this.#executor.query<ServerTableRow>(`SELECT ${serverColumns.join(', ')} FROM mcp_servers ORDER BY slug`);
    return rows.map(serverFromRow);
  }

  async upsert(row: McpServerRow): Promise<void> {
    if (row.transport === 'stdio' || row.url === null) throw new Error(`mcp server "${row.slug}": only http and sse servers are stored`);
    const headers = JSON.stringify(row.headers);
    const values = [row.slug, row.description, row.transport, row.url, headers, settingsJson(row), row.createdAt, row.updatedAt];
    await upsertRow(this.#executor, 'mcp_servers', serverColumns, values);
  }

  remove(slug: string): Promise<boolean> {
    return removeRow(this.#executor, 'mcp_servers', 'slug', slug);
  }
}

/** Admin-managed virtual MCP servers over any SQL dialect; listed by name in byte order. */
export class SqlMcpVirtualServerStore implements McpVirtualServerStore {
  readonly #executor: SqlExecutor;

  constructor(executor: SqlExecutor) {
    this.#executor = executor;
  }

  async list(): Promise<McpVirtualServerRow[]> {
    const rows = await this.#executor.query<VirtualTableRow>(`SELECT ${virtualColumns.join(', ')} FROM mcp_virtual_servers ORDER BY name`);
    return rows.map(virtualFromRow);
  }

  async upsert(row: McpVirtualServerRow): Promise<void> {
    const values = [row.name, row.description, JSON.stringify(row.servers), row.toolDiscovery, row.createdAt, row.updatedAt];
    await upsertRow(this.#executor, 'mcp_virtual_servers', virtualColumns, values);
  }

  remove(name: string): Promise<boolean> {
    return removeRow(this.#executor, 'mcp_virtual_servers', 'name', name);
  }
}

/** Inserts, or replaces every column but the key and `created_at`. The first column is the key. */
async function upsertRow(executor: SqlExecutor, table: string, columns: readonly string[], values: readonly SqlValue[]): Promise<void> {
  const parameters = new SqlParameters(executor);
  const placeholders = values.map((value) => parameters.add(value)).join(', ');
  const updates = columns
    .slice(1)
    .filter((column) => column !== 'created_at')
    .map((column) => `${column} = excluded.${column}`)
    .join(', ');
  const text = `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${placeholders})
    ON CONFLICT (${columns[0] ?? ''}) DO UPDATE SET ${updates}`;
  await executor.execute(text, parameters.values);
}

async function removeRow(executor: SqlExecutor, table: string, keyColumn: string, key: string): Promise<boolean> {
  const parameters = new SqlParameters(executor);
  return (await executor.execute(`DELETE FROM ${table} WHERE ${keyColumn} = ${parameters.add(key)}`, parameters.values)) > 0;
}

function serverFromRow(row: ServerTableRow): McpServerRow {
  if (row.transport !== 'http' && row.transport !== 'sse')
    throw new Error(`mcp_servers row "${row.slug}": unknown transport "${row.transport}"`);
  return {
    slug: row.slug,
    ...settingsOf(row.slug, row.settings_json),
    description: row.description,
    transport: row.transport,
    url: row.url,
    headers: stringRecord(row.slug, row.headers_json),
    command: null,
    args: [],
    env: {},
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  };
}

function virtualFromRow(row: VirtualTableRow): McpVirtualServerRow {
  const servers: unknown = JSON.parse(row.servers_json);
  if (!Array.isArray(servers) || !servers.every((slug) => typeof slug === 'string')) {
    throw new Error(`mcp_virtual_servers row "${row.name}": servers_json is not a list of slugs`);
  }
  return {
    name: row.name,
    description: row.description,
    servers: servers as string[],
    toolDiscovery: parseToolDiscovery(row.tool_discovery, `mcp_virtual_servers.${row.name}.tool_discovery`),
    createdAt: toNumber(row.created_at),
    updatedAt: toNumber(row.updated_at),
  };
}

function stringRecord(slug: string, json: string): Record<string, string> {
  const parsed: unknown = JSON.parse(json);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(`mcp_servers row "${slug}": headers_json is not an object`);
  }
  const entries = Object.entries(parsed as Record<string, unknown>);
  if (!entries.every(([, value]) => typeof value === 'string'))
    throw new Error(`mcp_servers row "${slug}": a header value is not a string`);
  return Object.fromEntries(entries) as Record<string, string>;
}

/** Settings as the declaration form (`allowed_tools`, ...), so that reading them back is the same parse. */
function settingsJson(settings: McpServerSettings): string {
  return JSON.stringify({
    name: settings.name,
    enabled: settings.enabled,
    allowed_tools: settings.allowedTools,
    disallowed_tools: settings.disallowedTools,
    user_paths: settings.userPaths,
    tool_timeout_seconds: settings.toolTimeoutSeconds,
  });
}

function settingsOf(slug: string, json: string): McpServerSettings {
  const parsed: unknown = JSON.parse(json);
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(`mcp_servers row "${slug}": settings_json is not an object`);
  }
  return parseServerSettings(parsed as Record<string, unknown>, (field) => `mcp_servers.${slug}.${field}`);
}
