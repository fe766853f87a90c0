import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigError } from '../errors/config-error.ts';
import { readDemoSettings } from './demo-settings.ts';
import { environmentPatterns } from './env-patterns.ts';
import { loadSettings, scalarVariables } from './load.ts';
import { configSchema } from './schema.ts';
import { unwrap } from './unknown-keys.ts';
import { parseByteSize } from './values.ts';

/**
 * docs/configuration.md against the code, in both directions: every YAML key of the schema and
 * every environment variable the loader reads is documented, and every documented one is read.
 * Nothing here lists a setting by hand: the keys come from walking the zod schema, the variables
 * from watching which names the loader reads from an environment object.
 */

const documentPath = new URL('../../docs/configuration.md', import.meta.url);

interface Row {
  readonly yamlKey: string | null;
  readonly variables: readonly string[];
  /** The default cell as written. */
  readonly fallback: string;
}

/** The rows of every table whose header starts `| YAML key | env |`. */
function documentedRows(markdown: string): Row[] {
  const rows: Row[] = [];
  let inTable = false;
  for (const line of markdown.split('\n')) {
    if (!line.startsWith('|')) {
      inTable = false;
      continue;
    }
    const cells = line
      .split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((cell) => cell.trim());
    if (/^YAML key$/i.test(cells[0] ?? '') && /^env$/i.test(cells[1] ?? '')) {
      inTable = true;
      continue;
    }
    if (!inTable || /^:?-+:?$/.test(cells[0] ?? '')) continue;
    const names = (cell: string): string[] => [...cell.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? '');
    rows.push({ yamlKey: names(cells[0] ?? '')[0] ?? null, variables: names(cells[1] ?? ''), fallback: cells[3] ?? '' });
  }
  return rows;
}

/** `providers.<instance>.type` and `providers.<name>.type` are one key: a record's entry. */
const normalizeKey = (key: string): string => key.replace(/<[^>]+>/g, '<name>');

/** The schema's keys, leaves only: records as `<name>`, lists of objects as `[]`. */
function schemaKeys(schema: z.ZodType, path = ''): string[] {
  const inner = unwrap(schema);
  if (inner instanceof z.ZodObject) {
    return Object.entries(inner.shape as Record<string, z.ZodType>).flatMap(([key, child]) =>
      schemaKeys(child, path ? `${path}.${key}` : key),
    );
  }
  if (inner instanceof z.ZodRecord) return schemaKeys(inner.valueType as z.ZodType, `${path}.<name>`);
  if (inner instanceof z.ZodArray && unwrap(inner.element as z.ZodType) instanceof z.ZodObject) {
    return schemaKeys(inner.element as z.ZodType, `${path}[]`);
  }
  return [path];
}

/** One instance of each type whose settings come partly from the environment (Azure, Bedrock, Vertex). */
const providersYaml = [
  'providers:',
  '  azure: { type: azure, api_key: k, base_url: "https://a.example.com" }',
  '  azure-eu: { type: azure, api_key: k, base_url: "https://b.example.com" }',
  '  azure-openai: { type: azure, api_key: k, base_url: "https://c.example.com" }',
  '  bedrock: { type: bedrock }',
  '  vertex: { type: vertex, project: p, location: us-central1 }',
].join('\n');

function configFile(yaml: string): string {
  const path = join(mkdtempSync(join(tmpdir(), 'configuration-doc-')), 'gateway.yaml');
  writeFileSync(path, yaml);
  return path;
}

/** An environment that records every name read from it. */
function watchedEnvironment(values: Record<string, string>): { env: Record<string, string | undefined>; read: Set<string> } {
  const read = new Set<string>();
  const env = new Proxy(values, {
    get(target, name) {
      if (typeof name === 'string') read.add(name);
      return Reflect.get(target, name) as unknown;
    },
  });
  return { env, read };
}

/**
 * The variables read by name. The environment holds only the names that open further reads
 * (CONFIG_FILE; an AWS key pair, which makes the session token count): read by name or by a scan,
 * each of them is a variable the code takes.
 */
function variablesReadByName(): Set<string> {
  const { env, read } = watchedEnvironment({
    CONFIG_FILE: configFile(providersYaml),
    AWS_ACCESS_KEY_ID: 'id',
    AWS_SECRET_ACCESS_KEY: 'secret',
  });
  loadSettings({ argv: [], env, cwd: tmpdir() });
  readDemoSettings(env as NodeJS.ProcessEnv);
  return new Set([...read].filter((name) => /^[A-Z][A-Z0-9_]*$/.test(name)));
}

/** A pattern's example: `<TYPE>` openai, `<SUFFIX>` eu, `<PATH>` /team, `<NAME>` instance openai. */
const exampleOf = (pattern: string): string =>
  pattern.replace('<TYPE>', 'OPENAI').replace('<SUFFIX>', 'EU').replace('<PATH>', 'TEAM').replace('<NAME>', 'OPENAI');

/** What the settings become with `extra` in the environment, or the key of the ConfigError it causes. */
function outcome(file: string, extra: Record<string, string>): string {
  try {
    return JSON.stringify(loadSettings({ argv: [], env: { CONFIG_FILE: file, ...extra }, cwd: tmpdir() }).settings);
  } catch (error) {
    if (error instanceof ConfigError) return `ConfigError ${error.key}`;
    throw error;
  }
}

const sorted = (items: Iterable<string>): string[] => [...new Set(items)].sort();

describe('docs/configuration.md', () => {
  const markdown = readFileSync(documentPath, 'utf8');
  const rows = documentedRows(markdown);
  const documentedVariables = rows.flatMap((row) => row.variables);

  it('has a row for every YAML key of the schema, and no key the schema lacks', () => {
    const documented = sorted(rows.flatMap((row) => (row.yamlKey === null ? [] : [normalizeKey(row.yamlKey)])));
    expect(documented.length).toBeGreaterThan(50);
    expect(documented).toEqual(sorted(schemaKeys(configSchema)));
  });

  it('lists every variable the loader reads by name, and none it does not read', () => {
    const expected = sorted([...variablesReadByName(), ...environmentPatterns.filter((name) => !name.includes('<'))]);
    expect(expected).toEqual(
      expect.arrayContaining(['POSTGRES_URL', 'RESPONSE_CACHE_ENABLED', 'OTEL_SERVICE_NAME', 'GOOGLE_CLOUD_PROJECT']),
    );
    expect(sorted(documentedVariables.filter((name) => !name.includes('<')))).toEqual(expected);
  });

  it('lists the variable families the loader scans for as patterns, each of which the loader acts on', () => {
    expect(sorted(documentedVariables.filter((name) => name.includes('<')))).toEqual(
      sorted(environmentPatterns.filter((name) => name.includes('<'))),
    );
    const file = configFile(providersYaml);
    const baseline = outcome(file, {});
    for (const pattern of environmentPatterns) {
      const example = exampleOf(pattern);
      const result = outcome(file, { [example]: 'x' });
      // Acted on: the settings change, or the value is refused naming the variable.
      expect(result === baseline ? `${example} ignored` : result.startsWith('ConfigError') ? result : 'changed').toMatch(
        new RegExp(`^(changed|ConfigError ${example})$`),
      );
    }
  });

  it('pairs each variable that overrides a YAML key with that key', () => {
    for (const [variable, [section, key]] of scalarVariables) {
      const row = rows.find((candidate) => candidate.yamlKey === `${section}.${key}`);
      expect(row?.variables ?? [], `${section}.${key}`).toContain(variable);
    }
  });

  it('states the default of every key whose default is a single value', () => {
    const defaults = configSchema.parse({}, { jitless: true }) as Record<string, unknown>;
    let checked = 0;
    for (const row of rows) {
      if (row.yamlKey === null || /[<[]/.test(row.yamlKey)) continue;
      const value = row.yamlKey.split('.').reduce<unknown>((node, key) => (node as Record<string, unknown> | undefined)?.[key], defaults);
      if (typeof value !== 'string' && typeof value !== 'number' && typeof value !== 'boolean') continue;
      const written = [...row.fallback.matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? '');
      const sizes = written.flatMap((text) => (/^\d+[KMG]B?$/i.test(text) ? [parseByteSize(text, text, Number.MAX_SAFE_INTEGER)] : []));
      expect([...written, ...sizes.map(String)], row.yamlKey).toContain(String(value));
      checked += 1;
    }
    expect(checked).toBeGreaterThan(50);
  });

  it('shows only YAML blocks that load as they are, without an unknown key', () => {
    const blocks = [...markdown.matchAll(/^```yaml\n([\s\S]*?)^```/gm)].map((match) => match[1] ?? '');
    expect(blocks.length).toBeGreaterThan(0);
    for (const block of blocks) {
      const { warnings } = loadSettings({ argv: [], env: { CONFIG_FILE: configFile(block) }, cwd: tmpdir() });
      expect(
        warnings.filter((warning) => warning.startsWith('unknown configuration key')),
        block,
      ).toEqual([]);
    }
  });
});
