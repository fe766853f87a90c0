/**
 * Server slugs and virtual server names (reference/mcp.md 1.3) and the validation error of MCP
 * declarations, shared by the configuration and the admin API. Each error names the full field.
 */
export class McpValidationError extends Error {
  readonly field: string;

  constructor(field: string, message: string) {
    super(message);
    this.name = 'McpValidationError';
    this.field = field;
  }
}

export const mcpNamePattern = /^[a-z0-9][a-z0-9_-]*$/;
export const mcpNameMaxLength = 64;

/** Names and slugs are compared trimmed and in lower case (`" Coding "` is `coding`). */
export const canonicalMcpName = (raw: string): string => raw.trim().toLowerCase();

/** Checks a canonical server slug or virtual server name; `what` is "server slug" or "virtual server name". */
export function checkMcpName(name: string, field: string, what: string): string {
  if (name === '') throw new McpValidationError(field, `${what} is required`);
  if (name.length > mcpNameMaxLength) throw new McpValidationError(field, `${what} exceeds ${mcpNameMaxLength} characters`);
  if (!mcpNamePattern.test(name)) {
    throw new McpValidationError(field, `${what} "${name}" must match ${mcpNamePattern.source}`);
  }
  return name;
}
