import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { killOnExit } from '../../../test/support/gateway-process.ts';

/**
 * A throwaway `redis-server` child on a free port, for tests that stop and restart Redis. The
 * shared Redis on 6379 is used by other suites and must never be stopped.
 */
export interface RedisServerProcess {
  readonly port: number;
  readonly url: string;
  /** Kills the server (SIGKILL: no shutdown save, like a crash). */
  stop(): Promise<void>;
  /** Starts it again on the same port, empty (no persistence). */
  start(): Promise<void>;
}

export async function startRedisServer(): Promise<RedisServerProcess> {
  const port = await freePort();
  let child: ChildProcess | null = null;
  const server: RedisServerProcess = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = await spawnRedis(port);
    },
    async stop() {
      const running = child;
      child = null;
      if (running === null || running.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => running.once('exit', () => resolve()));
      running.kill('SIGKILL');
      await exited;
    },
  };
  await server.start();
  return server;
}

function spawnRedis(port: number): Promise<ChildProcess> {
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  const child = spawn('redis-server', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  killOnExit(child); // never left running, whatever fails
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(() => fail(new Error(`redis-server did not start:\n${output}`)), 30_000);
    const fail = (error: Error): void => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(error);
    };
    child.once('error', fail);
    child.once('exit', (code) => fail(new Error(`redis-server exited with ${code}:\n${output}`)));
    child.stdout?.setEncoding('utf8');
    child.stdout?.on('data', (chunk: string) => {
      output += chunk;
      if (!output.includes('Ready to accept connections')) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve(child);
    });
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() => (typeof address === 'object' && address !== null ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}
