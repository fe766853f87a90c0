import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import Database from 'better-sqlite3';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { gatewayEnv, type GatewayProcess, killOnExit, startGateway, stopChild } from '../support/gateway-process.ts';
import { bearer, chatBody } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { descendantsOf, isAlive, killAlive } from '../support/process-tree.ts';

// The gateway honours SIGTERM whatever it is doing: when nobody reads its stdout, when its
// SQLite writer is held up by a lock, and under `npm start` (a signal to npm alone, or Ctrl-C
// to the whole process group, which delivers SIGINT twice).

async function chat(gateway: GatewayProcess, timeoutMs = 15_000): Promise<{ status: number; text: string }> {
  const response = await request(`${gateway.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { ...bearer(), 'content-type': 'application/json' },
    body: JSON.stringify(chatBody('mock-model')),
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
  return { status: response.statusCode, text: await response.body.text() };
}

/** Resolves with the exit code, or with 'timeout' when the process outlives `timeoutMs`. */
async function exitWithin(gateway: GatewayProcess, signal: NodeJS.Signals, timeoutMs: number): Promise<number | null | 'timeout'> {
  const exited = gateway.stop(signal);
  return Promise.race([exited, sleep(timeoutMs).then(() => 'timeout' as const)]);
}

describe('SIGTERM while the gateway is busy', () => {
  let mock: MockUpstream;

  beforeAll(async () => {
    mock = await startMockUpstream();
  });

  afterAll(async () => {
    await mock?.close();
  });

  it('exits 0 while nobody reads its stdout (log lines never block the event loop)', async () => {
    const gateway = await startGateway({ env: gatewayEnv(mock) });
    try {
      gateway.child.stdout?.pause();
      // About 1.6 MB of request log lines: far more than a pipe holds.
      const padding = 'x'.repeat(4_000);
      for (let index = 0; index < 400; index += 1) {
        const response = await request(`${gateway.url}/health?pad=${padding}`, { headersTimeout: 5_000, bodyTimeout: 5_000 });
        await response.body.dump();
        expect(response.statusCode).toBe(200);
      }
      expect(await exitWithin(gateway, 'SIGTERM', 20_000)).toBe(0);
    } finally {
      gateway.child.stdout?.resume();
      await gateway.kill();
    }
  });

  it('exits 0 while its SQLite writer waits on a lock, and writes the records once the lock is gone', async () => {
    const gateway = await startGateway({ env: gatewayEnv(mock, { USAGE_FLUSH_INTERVAL_MS: '50' }) });
    const blocker = new Database(join(gateway.cwd, 'data', 'gateway.db'), { timeout: 5_000 });
    try {
      blocker.exec('BEGIN EXCLUSIVE');
      const replies = await Promise.all(Array.from({ length: 5 }, () => chat(gateway)));
      expect(replies.map((reply) => reply.status)).toEqual([200, 200, 200, 200, 200]);
      await sleep(300); // the writer thread now waits on the lock (busy timeout 5 s)
      const health = await request(`${gateway.url}/health`, { headersTimeout: 2_000 });
      expect(health.statusCode, 'the event loop is free while the writer waits').toBe(200);
      await health.body.dump();
      const exit = exitWithin(gateway, 'SIGTERM', 40_000);
      await sleep(2_000);
      blocker.exec('COMMIT');
      expect(await exit).toBe(0);
      const count = blocker.prepare('SELECT COUNT(*) AS count FROM usage_records').get() as { count: number };
      expect(count.count).toBe(5);
    } finally {
      if (blocker.inTransaction) blocker.exec('ROLLBACK');
      blocker.close();
      await gateway.kill();
    }
  });
});

describe('npm start', () => {
  let mock: MockUpstream;

  beforeAll(async () => {
    // Every chat answer takes 1.5 s: a request is still in flight when the signal comes.
    mock = await startMockUpstream({ latencyMs: 1_500 });
  });

  afterAll(async () => {
    await mock?.close();
  });

  /** Starts `npm start`, sends a slow request, signals, and checks the drain, the exit code and that nothing is left. */
  async function signalDuringRequest(send: (npm: GatewayProcess) => void, detached: boolean): Promise<void> {
    const npm = await startGateway({ env: gatewayEnv(mock), viaNpmStart: true, detached });
    const pid = npm.child.pid ?? 0;
    const processes = descendantsOf(pid);
    try {
      expect(processes.length, 'npm runs the gateway').toBeGreaterThan(0);
      const inFlight = chat(npm);
      await sleep(500);
      const exited = new Promise<number | null>((resolve) => npm.child.once('exit', (code) => resolve(code)));
      send(npm);
      const reply = await inFlight;
      expect(reply.status, 'the request in flight completed during the drain').toBe(200);
      expect(reply.text).toContain('"chat.completion"');
      expect(await Promise.race([exited, sleep(30_000).then(() => 'timeout')])).toBe(0);
      expect(npm.output.some((line) => line.includes('"msg":"shutdown complete"'))).toBe(true);
      for (let waited = 0; waited < 5_000 && processes.some(isAlive); waited += 100) await sleep(100);
      expect(processes.filter(isAlive), 'no process of npm start left running').toEqual([]);
    } finally {
      killAlive(processes);
      await npm.kill();
    }
  }

  it('drains and exits 0 on SIGTERM sent to npm alone, leaving no orphan', async () => {
    await signalDuringRequest((npm) => npm.child.kill('SIGTERM'), false);
  });

  it('drains and exits 0 on Ctrl-C to the process group (SIGINT twice: npm forwards it too)', async () => {
    await signalDuringRequest((npm) => process.kill(-(npm.child.pid ?? 0), 'SIGINT'), true);
  });
});

describe('test processes', () => {
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`take the gateways they started with them when they end on ${signal} (as vitest stops a worker)`, async () => {
      const fixture = new URL('../support/gateway-leak-fixture.ts', import.meta.url).pathname;
      const runner = spawn(process.execPath, ['--import', 'tsx', fixture], { stdio: ['ignore', 'pipe', 'inherit'] });
      killOnExit(runner);
      let gatewayPid = 0;
      try {
        runner.stdout.setEncoding('utf8');
        const [line] = (await Promise.race([
          new Promise((resolve) => runner.stdout.once('data', (chunk: string) => resolve([chunk]))),
          sleep(60_000).then(() => ['']),
        ])) as string[];
        gatewayPid = Number(line?.trim());
        expect(gatewayPid, 'the fixture started a gateway').toBeGreaterThan(0);
        expect(isAlive(gatewayPid)).toBe(true);
        expect(await stopChild(runner, signal, 10_000)).toBe(signal === 'SIGTERM' ? 143 : 130);
        for (let waited = 0; waited < 5_000 && isAlive(gatewayPid); waited += 100) await sleep(100);
        expect(isAlive(gatewayPid), 'the gateway died with the test process').toBe(false);
      } finally {
        if (gatewayPid > 0) killAlive([gatewayPid]);
        await stopChild(runner, 'SIGKILL');
      }
    });
  }
});
