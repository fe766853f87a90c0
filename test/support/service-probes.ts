import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { connect } from 'node:net';

import pg from 'pg';

// What the test suites need besides Node: probed once per run by the global setup
// (global-setup.ts). Each probe answers quickly and never throws.

/** Which optional services the suites can use; in CI every one counts as present. */
export interface TestServices {
  /** PostgreSQL at DATABASE_URL_TEST (default postgres://postgres@127.0.0.1:5432/test). */
  readonly postgres: boolean;
  /** Redis at REDIS_URL_TEST (default redis://127.0.0.1:6379). */
  readonly redis: boolean;
  /** A `redis-server` binary, for suites that start (and kill) a Redis of their own. */
  readonly redisServer: boolean;
  /** Chromium at CHROMIUM_PATH (default /usr/bin/chromium), for the dashboard's browser tests. */
  readonly chromium: boolean;
}

export const testPostgresUrl = process.env['DATABASE_URL_TEST'] ?? 'postgres://postgres@127.0.0.1:5432/test';
export const testRedisUrl = process.env['REDIS_URL_TEST'] ?? 'redis://127.0.0.1:6379';
export const chromiumPath = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

const probeTimeoutMs = 3_000;

async function postgresAnswers(): Promise<boolean> {
  const client = new pg.Client({ connectionString: testPostgresUrl, connectionTimeoutMillis: probeTimeoutMs });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function redisAnswers(): Promise<boolean> {
  const url = new URL(testRedisUrl);
  return new Promise((resolve) => {
    const socket = connect(Number(url.port || 6379), url.hostname);
    const done = (answer: boolean): void => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(probeTimeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write(url.password === '' ? 'PING\r\n' : `AUTH ${decodeURIComponent(url.password)}\r\nPING\r\n`));
    let reply = '';
    socket.on('data', (chunk: Buffer) => {
      reply += chunk.toString('latin1');
      if (reply.includes('+PONG')) done(true);
      else if (reply.startsWith('-')) done(false);
    });
  });
}

function redisServerInstalled(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore', timeout: probeTimeoutMs }).status === 0;
}

export async function probeServices(): Promise<TestServices> {
  const [postgres, redis] = await Promise.all([postgresAnswers(), redisAnswers()]);
  return { postgres, redis, redisServer: redisServerInstalled(), chromium: existsSync(chromiumPath) };
}

/** One line per missing service: what to install or start. */
export function missingServiceLines(services: TestServices): string[] {
  const lines: string[] = [];
  if (!services.postgres)
    lines.push(`PostgreSQL suites: start PostgreSQL at ${testPostgresUrl} (user postgres, trust auth) or set DATABASE_URL_TEST`);
  if (!services.redis) lines.push(`Redis suites: start Redis at ${testRedisUrl} (redis-server) or set REDIS_URL_TEST`);
  if (!services.redisServer)
    lines.push('suites that run a Redis of their own: install redis-server (apt-get install redis-server, brew install redis)');
  if (!services.chromium) lines.push(`browser suites: install Chromium at ${chromiumPath} (apt-get install chromium) or set CHROMIUM_PATH`);
  return lines;
}
