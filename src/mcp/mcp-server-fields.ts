import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { InvalidUserPathError, normalizeUserPath, userPathCovers } from '../core/user-path.ts';
import { mcpNameMaxLength, mcpNamePattern, McpValidationError } from './mcp-names.ts';

/**
 * The access and filter settings of one upstream server (reference/mcp.md 1.2-1.3), shared by the
 * configuration and the admin API: display name, enabled flag, tool filters, user-path scopes and
 * the per-call timeout.
 */
export interface McpServerSettings {
  /** Display name (any Unicode, at most 100 characters); `''` shows the slug. */
  readonly name: string;
  /** A disabled server is neither connected nor served, but still exists (virtual members, conflicts). */
  readonly enabled: boolean;
  /** Upstream (un-prefixed) tool names exposed; empty exposes every tool. Applied before `disallowedTools`. */
  readonly allowedTools: readonly string[];
  /** Upstream tool names hidden. */
  readonly disallowedTools: readonly string[];
  /** Normalised user paths whose subtrees see the server, sorted; empty: every caller. */
  readonly userPaths: readonly string[];
  /** Bound of one `tools/call` relayed to this server. */
  readonly toolTimeoutSeconds: number;
}

/** GoModel's default per-call bound. */
export const defaultToolTimeoutSeconds = 30;
/** Node timers hold at most ~24.8 days; a day is plenty for one tool call. */
const maxToolTimeoutSeconds = 86_400;
const displayNameMaxLength = 100;

export const defaultServerSettings: McpServerSettings = Object.freeze({
  name: '',
  enabled: true,
  allowedTools: [],
  disallowedTools: [],
  userPaths: [],
  toolTimeoutSeconds: defaultToolTimeoutSeconds,
});

/** The settings fields of a server declaration (besides the connection fields). */
export const serverSettingFields = [
  'name',
  'enabled',
  'allowed_tools',
  'disallowed_tools',
  'user_paths',
  'tool_timeout_seconds',
  'tool_timeout',
] as const;

/** Reads the settings of a declaration; absent fields take their defaults. */
export function parseServerSettings(input: Record<string, unknown>, fieldOf: (field: string) => string): McpServerSettings {
  return {
    name: parseDisplayName(input['name'], fieldOf('name')),
    enabled: parseEnabled(input['enabled'], fieldOf('enabled')),
    allowedTools: parseToolNames(input['allowed_tools'], fieldOf('allowed_tools')),
    disallowedTools: parseToolNames(input['disallowed_tools'], fieldOf('disallowed_tools')),
    userPaths: parseUserPaths(input['user_paths'], fieldOf('user_paths')),
    toolTimeoutSeconds: parseToolTimeout(input, fieldOf),
  };
}

/**
 * The slug a display name gets when none is given (GoModel's DeriveMCPServerSlug): lower case,
 * NFKD, combining marks dropped, runs of anything but a-z0-9 joined by one `-`, at most 64
 * characters; when nothing is left, `mcp-` and the 32-bit FNV-1a of the normalised code points.
 */
export function deriveMcpServerSlug(name: string): string {
  const normalized = name.trim().toLowerCase().normalize('NFKD');
  let slug = '';
  let pendingSeparator = false;
  for (const character of normalized) {
    if (/\p{Mn}/u.test(character)) continue;
    if (!/^[a-z0-9]$/.test(character)) {
      pendingSeparator = slug !== '';
      continue;
    }
    if (pendingSeparator && slug.length < mcpNameMaxLength) slug += '-';
    pendingSeparator = false;
    if (slug.length >= mcpNameMaxLength) break;
    slug += character;
  }
  slug = slug.replace(/^[-_]+|[-_]+$/g, '');
  if (slug !== '') return slug;
  let hash = 2166136261;
  for (const character of normalized) hash = Math.imul((hash ^ (character.codePointAt(0) ?? 0)) >>> 0, 16777619) >>> 0;
  return `mcp-${hash.toString(16).padStart(8, '0')}`;
}

/** A name that is already a valid slug (once trimmed and lower-cased) is the slug; any other is derived. */
export function slugForName(name: string): string {
  const canonical = name.trim().toLowerCase();
  return canonical.length <= mcpNameMaxLength && mcpNamePattern.test(canonical) ? canonical : deriveMcpServerSlug(name);
}

/** Any Unicode, trimmed, at most 100 characters, no control characters; absent is `''`. */
export function parseDisplayName(value: unknown, field: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new McpValidationError(field, 'name must be a string');
  const name = value.trim();
  if ([...name].length > displayNameMaxLength) {
    throw new McpValidationError(field, `server name exceeds ${displayNameMaxLength} characters`);
  }
  if (/\p{Cc}/u.test(name)) throw new McpValidationError(field, 'server name must not contain control characters');
  return name;
}

function parseEnabled(value: unknown, field: string): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value === 'boolean') return value;
  if (value === 'true' || value === 'false') return value === 'true';
  throw new McpValidationError(field, 'enabled must be a boolean');
}

/** Tool names, trimmed, blanks and duplicates dropped (order kept); a string is a comma list. */
function parseToolNames(value: unknown, field: string): string[] {
  if (value === undefined || value === null) return [];
  const raw = typeof value === 'string' ? value.split(',') : value;
  if (!Array.isArray(raw)) throw new McpValidationError(field, `${lastSegment(field)} must be a list of tool names`);
  const names: string[] = [];
  raw.forEach((item: unknown, index) => {
    if (typeof item !== 'string') throw new McpValidationError(`${field}.${index}`, 'a tool name must be a string');
    const name = item.trim();
    if (name !== '' && !names.includes(name)) names.push(name);
  });
  return names;
}

/** User paths, normalised as requests' are (CONTRACT section 3), without duplicates, sorted. */
function parseUserPaths(value: unknown, field: string): string[] {
  if (value === undefined || value === null) return [];
  const raw = typeof value === 'string' ? value.split(',') : value;
  if (!Array.isArray(raw)) throw new McpValidationError(field, 'user_paths must be a list of user paths');
  const paths = new Set<string>();
  raw.forEach((item: unknown, index) => {
    if (typeof item !== 'string') throw new McpValidationError(`${field}.${index}`, 'a user path must be a string');
    if (item.trim() === '') return;
    try {
      paths.add(normalizeUserPath(item));
    } catch (error) {
      if (!(error instanceof InvalidUserPathError)) throw error;
      throw new McpValidationError(`${field}.${index}`, `invalid user_paths value ${JSON.stringify(item)}: ${error.message}`);
    }
  });
  return [...paths].sort();
}

/**
 * `tool_timeout_seconds` (a number), or `tool_timeout` (GoModel's YAML form: a duration such as
 * `45s`, `1m30s`, `500ms`, or a number of seconds). 0 or absent is the default; negative is refused.
 */
function parseToolTimeout(input: Record<string, unknown>, fieldOf: (field: string) => string): number {
  const seconds = input['tool_timeout_seconds'];
  const duration = input['tool_timeout'];
  const present = (value: unknown) => value !== undefined && value !== null && value !== '';
  if (present(seconds) && present(duration)) {
    throw new McpValidationError(fieldOf('tool_timeout'), 'set tool_timeout or tool_timeout_seconds, not both');
  }
  const field = present(duration) ? 'tool_timeout' : 'tool_timeout_seconds';
  const value = present(duration) ? durationSeconds(duration, fieldOf(field)) : numberOf(seconds, fieldOf(field));
  if (value === null || value === 0) return defaultToolTimeoutSeconds;
  if (value < 0) throw new McpValidationError(fieldOf(field), `${field} must not be negative`);
  if (value > maxToolTimeoutSeconds)
    throw new McpValidationError(fieldOf(field), `${field} must be at most ${maxToolTimeoutSeconds} seconds`);
  return value;
}

function numberOf(value: unknown, field: string): number | null {
  if (value === undefined || value === null || value === '') return null;
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  if (typeof number !== 'number' || !Number.isFinite(number)) throw new McpValidationError(field, `${lastSegment(field)} must be a number`);
  return number;
}

const durationUnits: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600 };

function durationSeconds(value: unknown, field: string): number | null {
  if (typeof value !== 'string' || /^\s*-?[\d.]+\s*$/.test(value)) return numberOf(value, field);
  const text = value.trim();
  const negative = text.startsWith('-');
  const body = negative ? text.slice(1) : text;
  const parts = [...body.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((part) => part[0]).join('') !== body) {
    throw new McpValidationError(field, `tool_timeout must be a duration such as "30s" or "1m30s", got ${JSON.stringify(value)}`);
  }
  const total = parts.reduce((sum, part) => sum + Number(part[1]) * (durationUnits[part[2] ?? 's'] ?? 1), 0);
  return negative ? -total : total;
}

function lastSegment(field: string): string {
  return field.slice(field.lastIndexOf('.') + 1);
}

/** Whether a caller on `userPath` sees a server scoped to `userPaths` (subtree match; empty scopes: everyone). */
export function userPathAllowed(userPaths: readonly string[], userPath: string): boolean {
  return userPaths.length === 0 || userPaths.some((scope) => userPathCovers(scope, userPath));
}

/** Whether the tool filters expose an upstream tool: in `allowed` (when not empty), then not in `disallowed`. */
export function toolExposed(settings: Pick<McpServerSettings, 'allowedTools' | 'disallowedTools'>, name: string): boolean {
  if (settings.allowedTools.length > 0 && !settings.allowedTools.includes(name)) return false;
  return !settings.disallowedTools.includes(name);
}

/** A catalog's tools split by the filters. */
export function filterTools(
  settings: Pick<McpServerSettings, 'allowedTools' | 'disallowedTools'>,
  tools: readonly Tool[],
): { exposed: Tool[]; excluded: Tool[] } {
  const exposed: Tool[] = [];
  const excluded: Tool[] = [];
  for (const tool of tools) (toolExposed(settings, tool.name) ? exposed : excluded).push(tool);
  return { exposed, excluded };
}
