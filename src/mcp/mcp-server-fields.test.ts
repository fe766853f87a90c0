import { describe, expect, it } from 'vitest';
import { thrown } from '../testing/thrown.ts';
import { McpValidationError } from './mcp-names.ts';
import {
  defaultServerSettings,
  deriveMcpServerSlug,
  filterTools,
  parseDisplayName,
  parseServerSettings,
  slugForName,
  userPathAllowed,
} from './mcp-server-fields.ts';

const parse = (input: Record<string, unknown>) => parseServerSettings(input, (field) => field);
const failure = (input: Record<string, unknown>) => thrown(McpValidationError, () => parse(input));

describe('deriveMcpServerSlug (GoModel DeriveMCPServerSlug)', () => {
  it.each([
    ['Linear MCP', 'linear-mcp'],
    ['  Linear MCP  ', 'linear-mcp'],
    ['Café Tools', 'cafe-tools'],
    ['GitHub (prod) — v2!', 'github-prod-v2'],
    ['ﬁle server', 'file-server'],
    ['my_server', 'my-server'],
    ['--Äpfel--', 'apfel'],
    ['线性 MCP', 'mcp'],
  ])('%j -> %s', (name, slug) => {
    expect(deriveMcpServerSlug(name)).toBe(slug);
  });

  it('falls back to mcp-<FNV-1a of the normalised code points> when nothing is left', () => {
    expect(deriveMcpServerSlug('线性')).toBe('mcp-b7ccbb8b');
    expect(deriveMcpServerSlug('🚀')).toMatch(/^mcp-[0-9a-f]{8}$/);
    expect(deriveMcpServerSlug('🚀')).not.toBe(deriveMcpServerSlug('线性'));
  });

  it('caps the slug at 64 characters without a trailing separator', () => {
    const slug = deriveMcpServerSlug(`${'a'.repeat(63)} bcd`);
    expect(slug).toBe('a'.repeat(63));
    expect(deriveMcpServerSlug('x'.repeat(80))).toBe('x'.repeat(64));
  });

  it('slugForName keeps a name that already is a slug (underscores included) and derives any other', () => {
    expect(slugForName('my_server')).toBe('my_server');
    expect(slugForName(' Delta ')).toBe('delta');
    expect(slugForName('GitHub Tools')).toBe('github-tools');
    expect(slugForName('x'.repeat(65))).toBe('x'.repeat(64));
  });
});

describe('server settings', () => {
  it('defaults: enabled, no filters, no scopes, 30 s', () => {
    expect(parse({})).toEqual(defaultServerSettings);
    expect(defaultServerSettings.toolTimeoutSeconds).toBe(30);
  });

  it('normalises tool lists and user paths', () => {
    expect(
      parse({
        name: '  Линейный сервер 🚀 ',
        enabled: false,
        allowed_tools: [' echo ', 'add', 'echo', ''],
        disallowed_tools: 'fail, whoami',
        user_paths: ['team-b/', '/team-a', '/team-a/', ' '],
        tool_timeout_seconds: 0,
      }),
    ).toEqual({
      name: 'Линейный сервер 🚀',
      enabled: false,
      allowedTools: ['echo', 'add'],
      disallowedTools: ['fail', 'whoami'],
      userPaths: ['/team-a', '/team-b'],
      toolTimeoutSeconds: 30,
    });
  });

  it('reads tool_timeout as a Go duration or seconds', () => {
    expect(parse({ tool_timeout: '45s' }).toolTimeoutSeconds).toBe(45);
    expect(parse({ tool_timeout: '1m30s' }).toolTimeoutSeconds).toBe(90);
    expect(parse({ tool_timeout: '500ms' }).toolTimeoutSeconds).toBe(0.5);
    expect(parse({ tool_timeout: 12 }).toolTimeoutSeconds).toBe(12);
    expect(parse({ tool_timeout_seconds: '7' }).toolTimeoutSeconds).toBe(7);
  });

  it('refuses wrong values naming the field', () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ name: 'x'.repeat(101) }, 'name', 'server name exceeds 100 characters'],
      [{ name: 'a\u0007b' }, 'name', 'server name must not contain control characters'],
      [{ name: 3 }, 'name', 'name must be a string'],
      [{ enabled: 'yes' }, 'enabled', 'enabled must be a boolean'],
      [{ allowed_tools: { a: 1 } }, 'allowed_tools', 'allowed_tools must be a list of tool names'],
      [{ disallowed_tools: [1] }, 'disallowed_tools.0', 'a tool name must be a string'],
      [{ user_paths: ['/a/../b'] }, 'user_paths.0', 'invalid user_paths value "/a/../b": ".." segments are not allowed'],
      [{ tool_timeout_seconds: -1 }, 'tool_timeout_seconds', 'tool_timeout_seconds must not be negative'],
      [{ tool_timeout_seconds: 'soon' }, 'tool_timeout_seconds', 'tool_timeout_seconds must be a number'],
      [{ tool_timeout: '-5s' }, 'tool_timeout', 'tool_timeout must not be negative'],
      [{ tool_timeout: 'ten seconds' }, 'tool_timeout', 'tool_timeout must be a duration such as "30s" or "1m30s", got "ten seconds"'],
      [{ tool_timeout: '5s', tool_timeout_seconds: 5 }, 'tool_timeout', 'set tool_timeout or tool_timeout_seconds, not both'],
    ];
    for (const [input, field, message] of cases) {
      const error = failure(input);
      expect([error.field, error.message]).toEqual([field, message]);
    }
  });

  it('display names count characters, not UTF-16 units', () => {
    expect(parseDisplayName('🚀'.repeat(100), 'name')).toBe('🚀'.repeat(100));
  });
});

describe('visibility and filters', () => {
  it('user paths are subtree scopes; no scope is everyone', () => {
    expect(userPathAllowed([], '/')).toBe(true);
    expect(userPathAllowed(['/team-a'], '/team-a')).toBe(true);
    expect(userPathAllowed(['/team-a'], '/Team-A/dev')).toBe(true);
    expect(userPathAllowed(['/team-a'], '/team-ab')).toBe(false);
    expect(userPathAllowed(['/team-a'], '/')).toBe(false);
    expect(userPathAllowed(['/team-a', '/ops'], '/ops/x')).toBe(true);
    expect(userPathAllowed(['/'], '/anyone')).toBe(true);
  });

  it('allowed first, then disallowed', () => {
    const tools = ['add', 'echo', 'fail', 'whoami'].map((name) => ({ name, inputSchema: { type: 'object' as const } }));
    const names = (settings: { allowedTools: string[]; disallowedTools: string[] }) => {
      const { exposed, excluded } = filterTools(settings, tools);
      return [exposed.map((tool) => tool.name), excluded.map((tool) => tool.name)];
    };
    expect(names({ allowedTools: [], disallowedTools: [] })).toEqual([['add', 'echo', 'fail', 'whoami'], []]);
    expect(names({ allowedTools: ['echo', 'add', 'ghost'], disallowedTools: ['add'] })).toEqual([['echo'], ['add', 'fail', 'whoami']]);
    expect(names({ allowedTools: [], disallowedTools: ['fail'] })).toEqual([['add', 'echo', 'whoami'], ['fail']]);
  });
});
