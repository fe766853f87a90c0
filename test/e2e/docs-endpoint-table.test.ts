import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { catalogue } from '../../src/gateway/relay/openai-resources.ts';
import { openApiPath } from '../../src/http/openapi/document.ts';
import { operations } from '../../src/http/openapi/operations.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { bearer, rawRequest } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';

// Issue 30, "What must hold": the README's endpoint table names every route with its owner rule
// and whether it is metered. This test holds the table to the routes a real gateway registers
// (its GET /openapi.json lists every one, described or not) and its Metered column to the
// catalogue's `metered` field (src/gateway/relay/openai-resources.ts).
//
// The table: the first Markdown table after README's `## Endpoints` heading, with the columns
// Resource | Routes | Owner rule | Metered.
// - Routes: items separated by `·`. An item is one code span `METHOD[ METHOD...] /path`,
//   optionally followed by a note (words after the code span, ignored). METHOD is GET, POST,
//   PUT, PATCH, DELETE, or ANY (every method registered on that path; at least one must be).
//   In a path, `{name}` is Fastify's `:name`, a final `*` is Fastify's wildcard, and a final
//   `/...` stands for every route under that prefix (at least one, unless never relayed).
// - Owner rule: free text; one starting with `never relayed` says that no route is registered
//   under the row's paths, and the test asks the gateway to prove it (404 `unknown_route`).
// - Metered: `yes` or `no`. A row that names catalogue routes says yes exactly when one of them
//   is metered; a row naming a POST model endpoint (OpenAPI tag `models`) says yes.

/**
 * Routes other branches add in parallel, named by the table before they are registered. The
 * integrator empties this list: the test fails on an entry that is registered (remove it) or
 * that the table does not name.
 */
const pending: readonly string[] = [];

/**
 * Rows the table marks metered whose catalogue routes do not say `metered` yet (another branch
 * sets it). The integrator empties this list too: the test fails on a row that is metered now.
 */
const pendingMetered: readonly string[] = [];

const root = resolve(import.meta.dirname, '../..');
const methods = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'ANY'] as const;

interface Item {
  methods: string[];
  /** In the table's syntax; without the `/...` of a prefix item. */
  path: string;
  prefix: boolean;
}

interface Row {
  resource: string;
  items: Item[];
  owner: string;
  metered: 'yes' | 'no';
  neverRelayed: boolean;
}

/** Fastify's `/v1/files/:id` in the table's syntax: `/v1/files/{id}` (a final `*` stays). */
function tablePath(fastifyUrl: string): string {
  return fastifyUrl.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function parseItem(text: string, resource: string): Item {
  const match = /^`([A-Z ]+) (\/[^`\s]*)`(?:\s+\S.*)?$/.exec(text.trim());
  if (match === null) throw new Error(`${resource}: not a route item: ${text}`);
  const itemMethods = (match[1] ?? '').split(' ');
  const unknown = itemMethods.filter((method) => !(methods as readonly string[]).includes(method));
  if (unknown.length > 0) throw new Error(`${resource}: unknown method ${unknown.join(', ')} in ${text}`);
  const path = match[2] ?? '';
  const prefix = path.endsWith('/...');
  return { methods: itemMethods, path: prefix ? path.slice(0, -'/...'.length) : path, prefix };
}

/** The rows of the first table after `## Endpoints`; throws on a row it cannot read. */
function parseTable(markdown: string): Row[] {
  const lines = markdown.split('\n');
  const heading = lines.indexOf('## Endpoints');
  if (heading < 0) throw new Error('README.md has no `## Endpoints` heading');
  const start = lines.findIndex((line, index) => index > heading && line.startsWith('|'));
  if (start < 0) throw new Error('no table after `## Endpoints`');
  const end = lines.findIndex((line, index) => index > start && !line.startsWith('|'));
  const cells = (line: string): string[] =>
    line
      .slice(1, -1)
      .split('|')
      .map((cell) => cell.trim());
  const [header] = lines.slice(start, start + 1).map(cells);
  expect(header).toEqual(['Resource', 'Routes', 'Owner rule', 'Metered']);
  return lines.slice(start + 2, end < 0 ? undefined : end).map((line) => {
    const [resource = '', routes = '', owner = '', metered = ''] = cells(line);
    if (metered !== 'yes' && metered !== 'no') throw new Error(`${resource}: Metered must be yes or no, not ${metered}`);
    const items = routes.split('·').map((text) => parseItem(text, resource));
    return { resource, items, owner, metered, neverRelayed: owner.startsWith('never relayed') };
  });
}

/** An OpenAPI path of the document in the table's syntax, through the Fastify URL it was made from (`{path}` back to `*`). */
const fastifyUrlOf = new Map(Object.keys(operations).map((url) => [openApiPath(url), url]));
const tablePathOf = (openApiPathName: string): string => tablePath(fastifyUrlOf.get(openApiPathName) ?? openApiPathName);

interface OpenApiRoutes {
  paths: Record<string, Record<string, { tags?: string[] }>>;
  'x-undocumented-routes'?: string[];
}

/** `METHOD /path` (table syntax) of every route the gateway registered, HEAD left out, from its OpenAPI document. */
function registeredRoutes(document: OpenApiRoutes): string[] {
  const routes = Object.entries(document.paths).flatMap(([path, described]) =>
    Object.keys(described).map((method) => `${method.toUpperCase()} ${tablePathOf(path)}`),
  );
  const undocumented = (document['x-undocumented-routes'] ?? []).map((route) => {
    const [method = '', url = ''] = route.split(' ');
    return `${method} ${tablePath(url)}`;
  });
  return [...new Set([...routes, ...undocumented])].filter((route) => !route.startsWith('HEAD ')).sort();
}

function split(route: string): { method: string; path: string } {
  const [method = '', path = ''] = route.split(' ');
  return { method, path };
}

function covers(item: Item, route: string): boolean {
  const { method, path } = split(route);
  const pathMatches = item.prefix ? path.startsWith(`${item.path}/`) || path === item.path : path === item.path;
  return pathMatches && (item.methods.includes('ANY') || item.methods.includes(method));
}

/** The exact `METHOD /path` routes an item names (none for ANY and prefix items). */
function exactRoutes(item: Item): string[] {
  return item.prefix || item.methods.includes('ANY') ? [] : item.methods.map((method) => `${method} ${item.path}`);
}

describe('the README endpoint table', () => {
  const rows = parseTable(readFileSync(join(root, 'README.md'), 'utf8'));
  let mock: MockUpstream;
  let gateway: GatewayProcess;
  let registered: string[];
  let modelPosts: Set<string>;

  beforeAll(async () => {
    mock = await startMockUpstream();
    // Every optional route on: metrics (the admin routes are one prefix row).
    gateway = await startGateway({ env: gatewayEnv(mock, { OPENAI_MODELS: 'mock-model', METRICS_ENABLED: 'true' }) });
    const reply = await rawRequest(`${gateway.url}/openapi.json`);
    expect(reply.status, reply.text).toBe(200);
    const document = JSON.parse(reply.text) as OpenApiRoutes;
    registered = registeredRoutes(document);
    modelPosts = new Set(
      Object.entries(document.paths).flatMap(([path, described]) =>
        described['post']?.tags?.includes('models') === true ? [`POST ${tablePathOf(path)}`] : [],
      ),
    );
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  it('is read: one row per resource family, every route item understood', () => {
    expect(rows.length).toBeGreaterThan(30);
    expect(new Set(rows.map((row) => row.resource)).size, 'resource names repeat').toBe(rows.length);
    expect(registered.length).toBeGreaterThan(150);
  });

  it('names every route the gateway registers', () => {
    const items = rows.flatMap((row) => row.items);
    const unnamed = registered.filter((route) => !items.some((item) => covers(item, route)));
    expect(unnamed, 'routes the gateway registers that the README endpoint table does not name').toEqual([]);
  });

  it('names no route the gateway does not register, except the pending ones', () => {
    const absent = rows
      .filter((row) => !row.neverRelayed)
      .flatMap((row) =>
        row.items.flatMap((item) => {
          const exact = exactRoutes(item);
          if (exact.length > 0) return exact.filter((route) => !registered.includes(route) && !pending.includes(route));
          const any = registered.some((route) => covers(item, route));
          return any ? [] : [`${item.methods.join(' ')} ${item.path}${item.prefix ? '/...' : ''}`];
        }),
      );
    expect(absent, 'routes the README endpoint table names that the gateway does not register').toEqual([]);
  });

  it('keeps the pending list honest: named by the table, not registered yet', () => {
    const named = new Set(rows.flatMap((row) => row.items.flatMap(exactRoutes)));
    expect(
      pending.filter((route) => !named.has(route)),
      'pending routes the table does not name',
    ).toEqual([]);
    expect(
      pending.filter((route) => registered.includes(route)),
      'pending routes that are registered now: remove them from `pending`',
    ).toEqual([]);
  });

  it('says never relayed only of paths nothing serves, and the gateway answers 404 unknown_route there', async () => {
    const never = rows.filter((row) => row.neverRelayed);
    expect(never.map((row) => row.resource)).toContain('Organization admin API');
    for (const row of never) {
      expect(registered.filter((route) => row.items.some((item) => covers(item, route)))).toEqual([]);
      for (const item of row.items) {
        const reply = await rawRequest(`${gateway.url}${item.path}/users`, { headers: bearer() });
        expectEnvelope(reply, { status: 404, type: 'not_found_error', code: 'unknown_route' });
      }
    }
  });

  it('marks a row metered exactly when one of its catalogue routes is metered', () => {
    const meteredCatalogue = new Map(catalogue.map((route) => [`${route.method} ${tablePath(route.path)}`, route.metered !== undefined]));
    const wrong: string[] = [];
    const stale: string[] = [];
    for (const row of rows) {
      const named = row.items.flatMap(exactRoutes).filter((route) => meteredCatalogue.has(route));
      if (named.length === 0) continue;
      const metered = named.some((route) => meteredCatalogue.get(route) === true);
      if (metered && pendingMetered.includes(row.resource)) stale.push(row.resource);
      const expected = metered || pendingMetered.includes(row.resource);
      if ((row.metered === 'yes') !== expected)
        wrong.push(`${row.resource}: says ${row.metered}, the catalogue says ${expected ? 'yes' : 'no'}`);
    }
    expect(wrong, 'rows whose Metered column disagrees with the catalogue').toEqual([]);
    expect(stale, 'rows the catalogue meters now: remove them from `pendingMetered`').toEqual([]);
    expect(
      pendingMetered.filter((resource) => !rows.some((row) => row.resource === resource)),
      'pendingMetered rows missing from the table',
    ).toEqual([]);
  });

  it('marks every row with a model endpoint (a POST the OpenAPI document tags `models`) metered', () => {
    expect(modelPosts.size).toBeGreaterThan(8);
    const unmetered = rows
      .filter((row) => row.metered === 'no')
      .flatMap((row) =>
        row.items
          .flatMap(exactRoutes)
          .filter((route) => modelPosts.has(route))
          .map((route) => `${row.resource}: ${route}`),
      );
    expect(unmetered, 'model endpoints in rows marked not metered').toEqual([]);
  });
});
