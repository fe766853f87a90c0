import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type CurlExample, matchesShown, parseCurl, parseDocBlocks } from '../support/docs-examples.ts';
import { gatewayEnv, type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { rawRequest } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';

// Issue 31 item 3, docs that run: every ```yaml block of README.md and docs/*.md (not
// docs/adr) is a configuration the gateway starts with, and every curl of a ```sh block is
// sent to a gateway started with its page's first configuration (none: the environment's
// `openai` instance), in page order. A start-up error, a 5xx, or an answer other than the
// ```json block shown right after the curl fails. Placeholders the pages use: the address
// http://127.0.0.1:8080, the master key `change-me` (or $MASTER_KEY), $GATEWAY_KEY and
// $KEY_ID (the key and id of the last key created in the page). A partial YAML block starts
// with `# fragment` (README "Tests" says so to contributors).

const root = resolve(import.meta.dirname, '../..');
const pages = [
  'README.md',
  ...readdirSync(join(root, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

interface Page {
  path: string;
  configs: Array<{ line: number; yaml: string }>;
  curls: CurlExample[];
}

const parsed: Page[] = pages.map((path) => {
  const blocks = parseDocBlocks(readFileSync(join(root, path), 'utf8'));
  const configs = blocks
    .filter((block) => /^ya?ml$/.test(block.lang) && !/^\s*# fragment\b/.test(block.text))
    .map((block) => ({ line: block.line, yaml: block.text }));
  const curls: CurlExample[] = [];
  blocks.forEach((block, index) => {
    if (!/^(sh|bash|shell)$/.test(block.lang)) return;
    const commands = parseCurl(block.text, block.line);
    const next = blocks[index + 1];
    const last = commands.at(-1);
    if (last !== undefined && next !== undefined && next.lang === 'json') last.shown = JSON.parse(next.text) as unknown;
    curls.push(...commands);
  });
  return { path, configs, curls };
});

/** The environment a documented configuration reads: its provider pointed at the mock. */
function docsEnv(mock: MockUpstream): Record<string, string> {
  return gatewayEnv(mock, { UPSTREAM_RETRIES: '0', GUARDRAIL_HOOK_SECRET: 'hook-secret' });
}

const mockModels = ['mock-model', 'gpt-4o', 'gpt-4o-mini', 'demo-model', 'text-embedding-3-small'];

/** Every admin route the code registers, as `METHOD /admin/...` with `:param` segments. */
function adminRoutes(): string[] {
  const folder = join(root, 'src/admin');
  const routes = new Set<string>();
  for (const name of readdirSync(folder).filter((file) => file.endsWith('.ts') && !file.endsWith('.test.ts'))) {
    const source = readFileSync(join(folder, name), 'utf8');
    for (const [, method, path] of source.matchAll(/\.(get|post|put|patch|delete)(?:<[^>]*>)?\(\s*'(\/admin[^']*)'/g)) {
      routes.add(`${(method ?? '').toUpperCase()} ${path ?? ''}`);
    }
  }
  return [...routes].sort();
}

describe('documentation examples', () => {
  it('gives a curl example for every admin route in docs/admin-api.md', () => {
    const curls = parsed.find((page) => page.path === 'docs/admin-api.md')?.curls ?? [];
    const routes = adminRoutes();
    expect(routes.length).toBeGreaterThan(20);
    const missing = routes.filter((route) => {
      const [method, path] = route.split(' ') as [string, string];
      const pattern = new RegExp(`^${path.replace(/:[a-z_]+/g, '[^/?]+')}(\\?|$)`);
      return !curls.some((curl) => curl.method === method && pattern.test(curl.path));
    });
    expect(missing, 'admin routes without a curl example in docs/admin-api.md').toEqual([]);
  });

  it('keeps the README a front door: at most 300 lines, with `npm ci` and `npm test`', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(300);
    expect(readme).toMatch(/^npm ci$/m);
    expect(readme).toMatch(/^npm test$/m);
  });

  it('names only src/ paths that exist (README.md, REVIEW.md, docs/*.md)', () => {
    const named = [...pages, 'REVIEW.md'].flatMap((path) =>
      [...readFileSync(join(root, path), 'utf8').matchAll(/\bsrc\/[\w./-]*[\w/]/g)].map((match) => ({ path, named: match[0] })),
    );
    expect(named.length).toBeGreaterThan(50);
    expect(named.filter((entry) => !existsSync(join(root, entry.named)))).toEqual([]);
  });

  it('finds the README example configuration and its curl examples', () => {
    const readme = parsed.find((page) => page.path === 'README.md');
    expect(readme?.configs.length).toBeGreaterThanOrEqual(1);
    expect(readme?.curls.some((curl) => curl.method === 'POST' && curl.path === '/admin/api-keys')).toBe(true);
  });

  const configs = parsed.flatMap((page) => page.configs.map((config) => ({ label: `${page.path}:${config.line}`, yaml: config.yaml })));
  describe.each(configs.map((config) => [config.label, config.yaml] as const))('configuration %s', (_label, yaml) => {
    let mock: MockUpstream;
    let gateway: GatewayProcess | undefined;
    beforeAll(async () => {
      mock = await startMockUpstream({ models: mockModels });
    });
    afterAll(async () => {
      await gateway?.stop();
      await mock?.close();
    });

    it('starts the gateway, which answers /health and /v1/models', async () => {
      gateway = await startGateway({ env: docsEnv(mock), configYaml: yaml });
      expect((await rawRequest(`${gateway.url}/health`)).status).toBe(200);
      const models = await rawRequest(`${gateway.url}/v1/models`, { headers: { authorization: `Bearer ${MASTER_KEY}` } });
      expect(models.status, models.text).toBe(200);
    }, 90_000);
  });

  const withCurls = parsed.filter((page) => page.curls.length > 0);
  describe.each(withCurls.map((page) => [page.path, page] as const))('curl examples of %s', (_path, page) => {
    let mock: MockUpstream;
    let gateway: GatewayProcess;
    const vars: Record<string, string> = { MASTER_KEY };

    beforeAll(async () => {
      mock = await startMockUpstream({ models: mockModels });
      gateway = await startGateway({ env: docsEnv(mock), configYaml: page.configs[0]?.yaml });
    }, 90_000);
    afterAll(async () => {
      await gateway?.stop();
      await mock?.close();
    });

    it.each(page.curls.map((curl) => [`line ${curl.line}: ${curl.method} ${curl.path}`, curl] as const))('%s', async (_label, curl) => {
      const expand = (text: string): string =>
        text.replace(/\$\{?([A-Z_]+)\}?/g, (whole, name: string) => vars[name] ?? whole).replaceAll('change-me', MASTER_KEY);
      const headers = Object.fromEntries(Object.entries(curl.headers).map(([name, value]) => [name, expand(value)]));
      const reply = await rawRequest(`${gateway.url}${expand(curl.path)}`, {
        method: curl.method,
        headers,
        ...(curl.body === undefined ? {} : { body: expand(curl.body) }),
      });
      expect(reply.status, `${curl.method} ${curl.path}: ${reply.text}`).toBeLessThan(500);
      const answer = reply.text.startsWith('{') || reply.text.startsWith('[') ? (JSON.parse(reply.text) as unknown) : undefined;
      if (curl.shown !== undefined) {
        expect(reply.status, reply.text).toBeLessThan(400);
        expect(matchesShown(answer, curl.shown), `the answer shown in ${page.path} line ${curl.line}, got ${reply.text}`).toBe(true);
      }
      if (answer !== null && typeof answer === 'object' && !Array.isArray(answer)) {
        const record = answer as Record<string, unknown>;
        if (typeof record['key'] === 'string' && typeof record['id'] === 'string') {
          vars['GATEWAY_KEY'] = record['key'];
          vars['KEY_ID'] = record['id'];
        }
      }
    });
  });
});
