import {
  mcpTransports,
  toolDiscoveryModes,
  type ConfiguredToolDiscovery,
  type McpServerDefinition,
  type McpTransport,
  type McpVirtualServerDefinition,
} from './mcp-definitions.ts';
import { canonicalMcpName, checkMcpName, McpValidationError } from './mcp-names.ts';
import { parseServerSettings, serverSettingFields } from './mcp-server-fields.ts';

export { canonicalMcpName, checkMcpName, mcpNameMaxLength, mcpNamePattern, McpValidationError } from './mcp-names.ts';

const serverFields = new Set(['description', 'transport', 'url', 'headers', 'command', 'args', 'env', ...serverSettingFields]);
const virtualFields = new Set(['description', 'servers', 'tool_discovery']);

export interface ServerParseOptions {
  /** False for the admin API: a stored row must never make the gateway start a program. */
  readonly allowStdio: boolean;
  /** True for the admin API (GoModel's clients send fields we do not know): unknown fields are ignored. */
  readonly ignoreUnknown?: boolean;
}

/**
 * One server's fields (`slug` comes from the YAML key or the admin body; `name` is the display
 * name). The transport defaults to `stdio` when only `command` is given, else `http`.
 */
export function parseMcpServerFields(value: unknown, slug: string, key: string, options: ServerParseOptions): McpServerDefinition {
  const input = requireRecord(value, key);
  if (options.ignoreUnknown !== true) rejectUnknownFields(input, serverFields, key);
  const transport = parseTransport(input, key);
  const description = optionalText(input['description'], fieldOf(key, 'description'));
  const settings = parseServerSettings(input, (field) => fieldOf(key, field));
  if (transport === 'stdio') {
    if (!options.allowStdio) {
      throw new McpValidationError(
        fieldOf(key, 'transport'),
        'stdio servers can only be declared in the configuration (mcp.servers or MCP_SERVERS), not through the admin API',
      );
    }
    for (const field of ['url', 'headers'] as const) {
      if (input[field] !== undefined)
        throw new McpValidationError(fieldOf(key, field), `${field} is only valid for the http and sse transports`);
    }
    const command = optionalText(input['command'], fieldOf(key, 'command'));
    if (command === '') throw new McpValidationError(fieldOf(key, 'command'), 'command is required for the stdio transport');
    const args = stringList(input['args'], fieldOf(key, 'args'));
    const env = stringMap(input['env'], fieldOf(key, 'env'), /^[A-Za-z_][A-Za-z0-9_]*$/);
    return { slug, ...settings, description, transport, url: null, headers: {}, command, args, env };
  }
  for (const field of ['command', 'args', 'env'] as const) {
    if (input[field] !== undefined) throw new McpValidationError(fieldOf(key, field), `${field} is only valid for the stdio transport`);
  }
  const url = parseUrl(input['url'], fieldOf(key, 'url'), transport);
  const headers = stringMap(input['headers'], fieldOf(key, 'headers'), /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/);
  return { slug, ...settings, description, transport, url, headers, command: null, args: [], env: {} };
}

/** One virtual server's fields (`name` comes from the YAML key or the admin body, canonical). */
export function parseMcpVirtualServerFields(value: unknown, name: string, key: string): McpVirtualServerDefinition {
  const input = requireRecord(value, key);
  rejectUnknownFields(input, virtualFields, key);
  return {
    name,
    description: optionalText(input['description'], fieldOf(key, 'description')),
    servers: parseMembers(input['servers'], fieldOf(key, 'servers')),
    toolDiscovery: parseToolDiscovery(input['tool_discovery'], fieldOf(key, 'tool_discovery')),
  };
}

/** `off`, `search`, or `''` (inherit); case-insensitive. */
export function parseToolDiscovery(value: unknown, field: string): ConfiguredToolDiscovery {
  if (value === undefined || value === null) return '';
  // YAML 1.1 readers turn a bare `off` into false.
  const mode = typeof value === 'string' ? value.trim().toLowerCase() : value === false ? 'off' : value;
  if (mode === '') return '';
  const known = toolDiscoveryModes.find((candidate) => candidate === mode);
  if (known === undefined) throw new McpValidationError(field, `tool_discovery must be "off" or "search", got ${JSON.stringify(value)}`);
  return known;
}

/** Member slugs, canonical, blanks dropped, duplicates removed with the order kept; a string is a comma list. */
function parseMembers(value: unknown, field: string): string[] {
  const raw = typeof value === 'string' ? value.split(',') : value;
  if (raw === undefined || raw === null) throw new McpValidationError(field, 'servers is required: list at least one MCP server slug');
  if (!Array.isArray(raw)) throw new McpValidationError(field, 'servers must be a list of MCP server slugs');
  const members: string[] = [];
  raw.forEach((item: unknown, index) => {
    if (typeof item !== 'string') throw new McpValidationError(`${field}.${index}`, 'a member must be a server slug string');
    const slug = canonicalMcpName(item);
    if (slug === '' || members.includes(slug)) return;
    try {
      checkMcpName(slug, `${field}.${index}`, 'server slug');
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new McpValidationError(`${field}.${index}`, `member ${JSON.stringify(item)}: ${reason}`);
    }
    members.push(slug);
  });
  if (members.length === 0) throw new McpValidationError(field, 'servers is required: list at least one MCP server slug');
  return members;
}

function parseTransport(input: Record<string, unknown>, key: string): McpTransport {
  const value = input['transport'];
  if (value === undefined || value === null || value === '')
    return input['command'] !== undefined && input['url'] === undefined ? 'stdio' : 'http';
  const name = typeof value === 'string' ? value.trim().toLowerCase() : value;
  const transport = mcpTransports.find((candidate) => candidate === name);
  if (transport === undefined) {
    throw new McpValidationError(fieldOf(key, 'transport'), `transport must be one of: ${mcpTransports.join(', ')}`);
  }
  return transport;
}

function parseUrl(value: unknown, field: string, transport: McpTransport): string {
  if (value === undefined || value === null || value === '') {
    throw new McpValidationError(field, `url is required for the ${transport} transport`);
  }
  if (typeof value !== 'string' || !/^https?:\/\//i.test(value.trim())) {
    throw new McpValidationError(field, 'url must start with http:// or https://');
  }
  try {
    return new URL(value.trim()).toString();
  } catch {
    throw new McpValidationError(field, 'url is not a valid URL');
  }
}

function optionalText(value: unknown, field: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value === 'number') return String(value);
  if (typeof value !== 'string') throw new McpValidationError(field, 'expected a string');
  return value.trim();
}

function stringList(value: unknown, field: string): string[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new McpValidationError(field, 'expected a list of strings');
  return value.map((item: unknown, index) => {
    if (typeof item === 'string') return item;
    if (typeof item === 'number' || typeof item === 'boolean') return String(item);
    throw new McpValidationError(`${field}.${index}`, 'expected a string');
  });
}

function stringMap(value: unknown, field: string, namePattern: RegExp): Record<string, string> {
  if (value === undefined || value === null) return {};
  const input = requireRecord(value, field);
  const result: Record<string, string> = {};
  for (const [name, item] of Object.entries(input)) {
    if (!namePattern.test(name)) throw new McpValidationError(`${field}.${name}`, `invalid name ${JSON.stringify(name)}`);
    if (typeof item !== 'string' && typeof item !== 'number' && typeof item !== 'boolean') {
      throw new McpValidationError(`${field}.${name}`, 'expected a string value');
    }
    result[name] = String(item);
  }
  return result;
}

export function requireRecord(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new McpValidationError(field, 'expected an object');
  return value as Record<string, unknown>;
}

function rejectUnknownFields(input: Record<string, unknown>, allowed: ReadonlySet<string>, key: string): void {
  const unknown = Object.keys(input).find((field) => !allowed.has(field));
  if (unknown !== undefined) {
    throw new McpValidationError(fieldOf(key, unknown), `unknown field (expected ${[...allowed].join(', ')})`);
  }
}

export function fieldOf(key: string, field: string): string {
  return key === '' ? field : `${key}.${field}`;
}
