import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

import { type GatewayProcess, gatewayStartTimeoutMs, killOnExit, startGateway, stopChild } from '../support/gateway-process.ts';
import { testRedisUrl, testServices } from '../support/services.ts';
import { createGatewayDatabase, type GatewayDatabase } from '../support/storage.ts';
import { eventually } from '../support/wait.ts';

// No Docker engine here: docker-compose.yaml is read as YAML, its structure checked against
// docs/scaling.md, and its gateway environment and config file are then run for real (two
// built gateways, the demo provider, a PostgreSQL schema and Redis of the test machine),
// with only the service host names replaced by the local addresses.

const root = resolve(import.meta.dirname, '..', '..');

interface Readiness {
  status: string;
  components?: Record<string, { status: string; type?: string; store?: string }>;
}

interface ComposeService {
  image?: string;
  build?: string;
  command?: string[];
  environment?: Record<string, string>;
  volumes?: string[];
  ports?: string[];
  depends_on?: Record<string, { condition: string }>;
}

const compose = parse(readFileSync(join(root, 'docker-compose.yaml'), 'utf8'), { merge: true }) as {
  services: Record<string, ComposeService>;
};
const gatewayNames = Object.keys(compose.services).filter((name) => name.startsWith('gateway-'));
const firstGateway = compose.services[gatewayNames[0] ?? ''] ?? {};

describe('docker-compose.yaml', () => {
  it('runs two gateway replicas of one image on PostgreSQL and shared Redis counters', () => {
    expect(gatewayNames).toHaveLength(2);
    for (const name of gatewayNames) {
      const service = compose.services[name];
      expect(service?.environment).toEqual(firstGateway.environment);
      expect(service?.image).toBe('model-gateway:local');
      expect(Object.keys(service?.depends_on ?? {}).sort()).toEqual(['mock-upstream', 'postgres', 'redis']);
    }
    const env = firstGateway.environment ?? {};
    expect(env['STORAGE_TYPE']).toBe('postgresql');
    expect(env['RATE_LIMITS_STORE']).toBe('redis');
    expect(env['REDIS_URL']).toBe('redis://redis:6379');
    expect(env['DATABASE_URL']).toMatch(/^postgres:\/\/[^@]+@postgres:5432\//);
    expect(new Set(gatewayNames.flatMap((name) => compose.services[name]?.ports ?? [])).size).toBe(2);
    expect(compose.services['postgres']?.image).toMatch(/^postgres:\d+/);
    expect(compose.services['redis']?.image).toMatch(/^redis:\d+/);
    expect(compose.services['mock-upstream']?.command).toEqual(['node', 'dist/demo/mock-provider-main.js']);
  });
});

describe.skipIf(!testServices.postgres || !testServices.redis)('docker-compose.yaml gateway settings, run without Docker', () => {
  let database: GatewayDatabase;
  let mock: ChildProcess;
  const gateways: GatewayProcess[] = [];
  const configDir = mkdtempSync(join(tmpdir(), 'compose-config-'));

  beforeAll(async () => {
    database = await createGatewayDatabase('postgresql');
    const mockPort = await startMock();
    const env = localEnvironment(mockPort);
    for (const _name of gatewayNames) gateways.push(await startGateway({ env }));
  }, 3 * gatewayStartTimeoutMs);

  afterAll(async () => {
    await Promise.all(gateways.map((gateway) => gateway.stop()));
    if (mock) await stopChild(mock, 'SIGTERM', 10_000);
    await database?.dispose();
    rmSync(configDir, { recursive: true, force: true });
  });

  async function startMock(): Promise<number> {
    mock = spawn(process.execPath, [join(root, 'dist', 'demo', 'mock-provider-main.js')], {
      env: { PATH: process.env['PATH'] ?? '', MOCK_HOST: '127.0.0.1', MOCK_PORT: '0' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    killOnExit(mock);
    return new Promise((resolvePort, reject) => {
      mock.stdout?.on('data', (chunk: Buffer) => {
        const port = /listening on [\d.]+:(\d+)/.exec(chunk.toString('utf8'))?.[1];
        if (port) resolvePort(Number(port));
      });
      mock.once('exit', (code) => reject(new Error(`demo provider exited with ${code}`)));
    });
  }

  /** The compose environment and config file, with `postgres`, `redis` and `mock-upstream` made local. */
  function localEnvironment(mockPort: number): Record<string, string> {
    const composeEnv = firstGateway.environment ?? {};
    const mount = (firstGateway.volumes ?? []).find((volume) => volume.includes(composeEnv['CONFIG_FILE'] ?? '\u0000')) ?? '';
    const configSource = join(root, mount.split(':')[0] ?? '');
    const configFile = join(configDir, 'config.yaml');
    writeFileSync(configFile, readFileSync(configSource, 'utf8').replaceAll('mock-upstream:9000', `127.0.0.1:${mockPort}`));
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(composeEnv)) env[name] = value.replace(/\$\{\w+:-([^}]*)\}/g, '$1');
    return {
      ...env,
      ...database.env,
      CONFIG_FILE: configFile,
      REDIS_URL: testRedisUrl,
      RATE_LIMITS_REDIS_PREFIX: `compose-test:{${randomUUID()}}:`,
    };
  }

  it('answers a chat completion on each replica, with Redis counters up', async () => {
    for (const gateway of gateways) {
      const response = await request(`${gateway.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: 'Bearer change-me', 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'demo/demo-model', messages: [{ role: 'user', content: `hello ${randomUUID()}` }] }),
      });
      const body = (await response.body.json()) as { choices?: Array<{ message: { content: string } }> };
      expect(response.statusCode).toBe(200);
      expect(body.choices?.[0]?.message.content).toContain('Model Gateway demo provider');
      // A Redis ping past its short deadline on an overloaded machine reads `degraded` for a
      // moment (correctly): readiness must come within seconds, not on the first probe.
      const health = await eventually(async () => {
        const ready = await request(`${gateway.url}/health/ready`);
        const body = (await ready.body.json()) as Readiness;
        return ready.statusCode === 200 && body.status === 'ready' ? body : undefined;
      }, `${gateway.url}/health/ready answering 200 ready`);
      expect(health.components?.['storage']).toMatchObject({ status: 'up', type: 'postgresql' });
      expect(health.components?.['rate_limits']).toMatchObject({ status: 'up', store: 'redis' });
      expect(health.components?.['response_cache']).toMatchObject({ status: 'up' });
    }
  });
});
