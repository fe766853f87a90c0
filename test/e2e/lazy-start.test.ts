import { once } from 'node:events';
import { existsSync, readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway } from '../support/gateway-process.ts';
import { startMockUpstream, type MockUpstream } from '../support/mock-upstream.ts';

// ADR 0016: packages that only some configurations use are loaded when first needed, not at
// start-up. The gateway runs with a preload that lists, on exit, every module it loaded. Built
// by `npm run build`, dist/main.js is the start-up bundle: a loaded file of it stands for the
// modules esbuild put in it (dist/chunks/inputs.json), so the same names are checked.
const probe = resolve(import.meta.dirname, '..', 'support', 'loaded-modules-probe.mjs');
const dist = resolve(import.meta.dirname, '..', '..', 'dist');
const bundleManifest = join(dist, 'chunks', 'inputs.json');
const lazyPackages = [
  '@modelcontextprotocol/sdk',
  'ioredis',
  'prom-client',
  'google-auth-library',
  '@smithy/',
  'node_modules/ws/',
  'node_modules/yaml/',
  'node_modules/jose/',
];

async function loadedModules(options: { env?: Record<string, string>; configYaml?: string }, use: (url: string) => Promise<void>) {
  const gateway = await startGateway({
    env: { ...options.env, NODE_OPTIONS: `--import ${probe}`, LOADED_MODULES_FILE: 'loaded-modules.txt' },
    ...(options.configYaml === undefined ? {} : { configYaml: options.configYaml }),
  });
  try {
    const health = await request(`${gateway.url}/health`);
    expect(health.statusCode).toBe(200);
    await health.body.dump();
    await use(gateway.url);
  } finally {
    expect(await gateway.stop()).toBe(0);
  }
  return withBundleInputs(readFileSync(join(gateway.cwd, 'loaded-modules.txt'), 'utf8'));
}

function withBundleInputs(modules: string): string {
  if (!existsSync(bundleManifest)) return modules;
  const inputs = JSON.parse(readFileSync(bundleManifest, 'utf8')) as Record<string, string[]>;
  const prefix = `${pathToFileURL(dist).href}/`;
  const lines = modules.split('\n');
  const bundled = lines.flatMap((line) => (line.startsWith(prefix) ? (inputs[line.slice(prefix.length)] ?? []) : []));
  return [...lines, ...bundled].join('\n');
}

/** Sends a WebSocket upgrade to /v1/realtime (no model: refused) and waits for the answer. */
async function upgradeAnswer(url: string): Promise<void> {
  const { hostname, port } = new URL(url);
  const socket = connect(Number(port), hostname);
  await once(socket, 'connect');
  socket.write(
    'GET /v1/realtime HTTP/1.1\r\nHost: localhost\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n' +
      'Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n',
  );
  const [answer] = (await once(socket, 'data')) as [Buffer];
  socket.destroy();
  expect(answer.toString()).toMatch(/^HTTP\/1\.1 400/);
}

function loadedOf(modules: string): string[] {
  return lazyPackages.filter((name) => modules.includes(name));
}

describe('lazy start', () => {
  let mock: MockUpstream;
  const env = (): Record<string, string> => ({ OPENAI_API_KEY: 'sk-up', OPENAI_BASE_URL: mock.url, OPENAI_MODELS: 'mock-model' });

  beforeAll(async () => {
    mock = await startMockUpstream();
  });

  afterAll(async () => {
    await mock.close();
  });

  it('a default start, serving a chat request, loads none of the packages its configuration does not use', async () => {
    const modules = await loadedModules({ env: env() }, async (url) => {
      const response = await request(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'openai/mock-model', messages: [{ role: 'user', content: 'hi' }] }),
      });
      expect(response.statusCode).toBe(200);
      await response.body.dump();
    });
    expect(modules).toContain('node_modules/fastify/');
    expect(modules).not.toContain('node_modules/undici/index.js');
    // No route declares a fastify schema: its validator compiler (ajv) stays unloaded (ADR 0025).
    expect(modules).not.toContain('node_modules/ajv/');
    expect(modules).not.toContain('@fastify/ajv-compiler');
    expect(loadedOf(modules)).toEqual([]);
  });

  it('loads them when they are used: metrics, a config file, /mcp, /v1/realtime', async () => {
    const modules = await loadedModules({ env: { ...env(), METRICS_ENABLED: 'true' }, configYaml: 'server:\n  port: 0\n' }, async (url) => {
      const mcp = await request(`${url}/mcp`, { method: 'GET' });
      expect(mcp.statusCode).toBe(400);
      await mcp.body.dump();
      await upgradeAnswer(url);
    });
    expect(loadedOf(modules)).toEqual(['@modelcontextprotocol/sdk', 'prom-client', 'node_modules/ws/', 'node_modules/yaml/']);
  });
});
