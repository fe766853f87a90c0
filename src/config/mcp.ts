import type { McpServerDefinition, McpVirtualServerDefinition } from '../mcp/mcp-definitions.ts';
import {
  canonicalMcpName,
  checkMcpName,
  McpValidationError,
  parseMcpServerFields,
  parseMcpVirtualServerFields,
  parseToolDiscovery,
} from '../mcp/mcp-validation.ts';
import { slugForName } from '../mcp/mcp-server-fields.ts';
import { ConfigError } from '../errors/config-error.ts';
import { expandVariables } from './values.ts';
import type { McpEventStoreKind, McpSettings } from '../mcp/mcp-settings.ts';

type Env = Readonly<Record<string, string | undefined>>;

export interface McpDocument {
  readonly enabled: boolean;
  readonly allowed_origins: readonly string[];
  readonly allowed_hosts: readonly string[];
  readonly event_store?: McpEventStoreKind | undefined;
  readonly tool_discovery?: unknown;
  readonly servers?: unknown;
  readonly virtual_servers?: unknown;
  readonly max_upstream_sessions_per_server: number;
  readonly upstream_session_idle_seconds: number;
}

/**
 * Builds the MCP settings. When MCP is off the declarations are ignored (not validated), as
 * rate limits do. A virtual server named like a server is accepted with a warning: the server
 * keeps `/mcp/{name}` and the listing explains the conflict.
 */
export function buildMcpSettings(
  document: McpDocument,
  env: Env,
  origins: ReadonlyMap<string, string>,
  warnings: string[],
  redisUrl: string | null = null,
): McpSettings {
  const toolDiscovery = withConfigErrors(
    () => parseToolDiscovery(document.tool_discovery, origins.get('mcp.tool_discovery') ?? 'mcp.tool_discovery') || 'off',
  );
  const allowedOrigins = document.allowed_origins.map((origin) => (origin === '*' ? origin : origin.replace(/\/+$/, '').toLowerCase()));
  const allowedHosts = document.allowed_hosts.map((host) => host.toLowerCase());
  const eventStore = document.event_store ?? (redisUrl === null ? 'memory' : 'redis');
  if (eventStore === 'redis' && redisUrl === null) {
    throw new ConfigError(origins.get('mcp.event_store') ?? 'mcp.event_store', 'the redis event store needs REDIS_URL (redis.url)');
  }
  const upstreamSessions = { maxPerServer: document.max_upstream_sessions_per_server, idleSeconds: document.upstream_session_idle_seconds };
  const transport = { allowedOrigins, allowedHosts, eventStore, redisUrl: eventStore === 'redis' ? redisUrl : null };
  if (!document.enabled) return { enabled: false, toolDiscovery, ...transport, servers: [], virtualServers: [], upstreamSessions };
  const parseServer: Parse<McpServerDefinition> = (value, slug, key) => parseMcpServerFields(value, slug, key, { allowStdio: true });
  const servers = mergeDeclarations(
    declarationsOf(document.servers, 'mcp.servers', 'server slug', parseServer),
    envDeclarations(env, 'MCP_SERVERS', 'server slug', parseServer),
    (server) => server.slug,
  );
  const virtualServers = mergeDeclarations(
    declarationsOf(document.virtual_servers, 'mcp.virtual_servers', 'virtual server name', parseMcpVirtualServerFields),
    envDeclarations(env, 'MCP_VIRTUAL_SERVERS', 'virtual server name', parseMcpVirtualServerFields),
    (server) => server.name,
  );
  checkVirtualMembers(servers, virtualServers, warnings);
  return { enabled: true, toolDiscovery, ...transport, servers, virtualServers, upstreamSessions };
}

type Parse<Definition> = (value: unknown, name: string, key: string) => Definition;

/**
 * Declarations as a map of name -> declaration (the documented form), or as a list of
 * declarations carrying their name. Two entries with the same canonical name are an error.
 */
function declarationsOf<Definition>(value: unknown, key: string, what: string, parse: Parse<Definition>): Definition[] {
  const seen = new Map<string, string>();
  return entriesOf(value, key, what === 'server slug').map(([rawName, entry, entryKey]) => {
    const name = withConfigErrors(() => checkMcpName(canonicalMcpName(rawName), entryKey, what));
    const earlier = seen.get(name);
    if (earlier !== undefined) {
      throw new ConfigError(
        key,
        `entries ${JSON.stringify(earlier)} and ${JSON.stringify(rawName)} both canonicalize to ${what} "${name}"`,
      );
    }
    seen.set(name, rawName);
    return withConfigErrors(() => parse(entry ?? {}, name, entryKey));
  });
}

/**
 * `[raw name, declaration without its name, key for errors]` of each entry. A listed server carries
 * its `slug`, or a `name` that is its display name and gives the slug (derived when it is not one).
 */
function entriesOf(value: unknown, key: string, servers: boolean): Array<[string, unknown, string]> {
  if (value === undefined || value === null) return [];
  if (typeof value !== 'object') throw new ConfigError(key, 'expected a mapping of name -> declaration');
  if (!Array.isArray(value))
    return Object.entries(value as Record<string, unknown>).map(([name, entry]) => [name, entry, `${key}.${name}`]);
  return value.map((item: unknown, index): [string, unknown, string] => {
    const entryKey = `${key}.${index}`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new ConfigError(entryKey, 'expected a declaration object');
    const { name, slug, ...entry } = item as Record<string, unknown>;
    if (servers) {
      if (typeof slug === 'string' && slug.trim() !== '') return [slug, { ...entry, name }, entryKey];
      if (typeof name === 'string' && name.trim() !== '') return [slugForName(name), { ...entry, name }, entryKey];
      throw new ConfigError(`${entryKey}.name`, 'name is required');
    }
    const rawName = name ?? slug;
    if (typeof rawName !== 'string') throw new ConfigError(`${entryKey}.name`, 'name is required');
    return [rawName, entry, entryKey];
  });
}

function envDeclarations<Definition>(env: Env, variable: string, what: string, parse: Parse<Definition>): Definition[] {
  const raw = env[variable]?.trim();
  if (!raw) return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw new ConfigError(variable, `not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (typeof parsed !== 'object' || parsed === null) throw new ConfigError(variable, 'expected a JSON object of name -> declaration');
  return declarationsOf(expandVariables(parsed, env), variable, what, parse);
}

/** Environment entries replace file entries of the same name in place; new ones follow. */
function mergeDeclarations<Definition>(
  fromFile: Definition[],
  fromEnv: Definition[],
  nameOf: (definition: Definition) => string,
): Definition[] {
  const byName = new Map<string, Definition>();
  for (const definition of [...fromFile, ...fromEnv]) byName.set(nameOf(definition), definition);
  return [...byName.values()].sort((left, right) => (nameOf(left) < nameOf(right) ? -1 : 1));
}

function checkVirtualMembers(
  servers: readonly McpServerDefinition[],
  virtualServers: readonly McpVirtualServerDefinition[],
  warnings: string[],
): void {
  const slugs = new Set(servers.map((server) => server.slug));
  const virtualNames = new Set(virtualServers.map((server) => server.name));
  for (const virtual of virtualServers) {
    if (slugs.has(virtual.name)) {
      warnings.push(
        `virtual MCP server "${virtual.name}" is not served: MCP server "${virtual.name}" uses the same name; rename one of them`,
      );
    }
    virtual.servers.forEach((member, index) => {
      if (virtualNames.has(member) && !slugs.has(member)) {
        throw new ConfigError(
          `mcp.virtual_servers.${virtual.name}.servers.${index}`,
          `member "${member}" is a virtual server; virtual servers can only include MCP servers`,
        );
      }
    });
  }
}

function withConfigErrors<Result>(action: () => Result): Result {
  try {
    return action();
  } catch (error) {
    if (error instanceof McpValidationError) throw new ConfigError(error.field, error.message);
    throw error;
  }
}
