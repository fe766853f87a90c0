import { randomUUID } from 'node:crypto';
import { createServer, connect } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import type { Logger } from 'pino';

/** The Redis the cache tests use unless REDIS_URL_TEST says otherwise. */
export const defaultTestRedisUrl = 'redis://127.0.0.1:6379';

/** A plain client for inspecting and cleaning up what the store wrote. */
export interface RedisTestHarness {
  readonly admin: Redis;
  /** A key prefix no other test run uses. */
  readonly prefix: string;
  /** Deletes every key under the prefix and quits the admin client. */
  dispose(): Promise<void>;
}

/** Connects to the test Redis, or fails with a message that says what is missing. Never skips. */
export async function openRedisTestHarness(url: string): Promise<RedisTestHarness> {
  const admin = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 2_000, retryStrategy: () => null });
  admin.on('error', () => undefined);
  try {
    await admin.connect();
    await admin.ping();
  } catch (error) {
    admin.disconnect();
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`The response cache tests need Redis at ${url} (start it, or point REDIS_URL_TEST at one): ${reason}`);
  }
  const prefix = `gateway-test:${randomUUID()}:`;
  return {
    admin,
    prefix,
    dispose: async () => {
      const keys = await admin.keys(`${prefix}*`);
      if (keys.length > 0) await admin.del(...keys);
      await admin.quit();
    },
  };
}

export interface CapturedLog {
  readonly level: number;
  readonly msg: string;
}

/** A pino logger whose lines are kept in `lines` (level 40 = warn, 30 = info). */
export function capturingLogger(): { logger: Logger; lines: CapturedLog[] } {
  const lines: CapturedLog[] = [];
  const destination = { write: (line: string) => void lines.push(JSON.parse(line) as CapturedLog) };
  return { logger: pino({ level: 'debug' }, destination), lines };
}

/** A loopback TCP proxy to Redis that a test can cut and restore, to stage an outage. */
export class TcpProxy {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  private listeningPort = 0;
  private frozen = false;

  private readonly upstreamHost: string;
  private readonly upstreamPort: number;

  constructor(upstreamHost: string, upstreamPort: number) {
    this.upstreamHost = upstreamHost;
    this.upstreamPort = upstreamPort;
  }

  get port(): number {
    return this.listeningPort;
  }

  /** Starts listening (on a free port the first time, on the same port afterwards). */
  async start(): Promise<void> {
    const server = createServer((client) => this.relay(client));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.listeningPort, '127.0.0.1', () => resolve());
    });
    this.listeningPort = (server.address() as AddressInfo).port;
    this.server = server;
  }

  /** Keeps connections open but drops every byte from now on: a Redis that hangs. */
  freeze(): void {
    this.frozen = true;
  }

  /** Stops listening and cuts every open connection. */
  async stop(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private relay(client: Socket): void {
    const upstream = connect(this.upstreamPort, this.upstreamHost);
    for (const socket of [client, upstream]) {
      this.sockets.add(socket);
      socket.on('error', () => undefined);
      socket.on('close', () => {
        this.sockets.delete(socket);
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => {
      if (!this.frozen) upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!this.frozen) client.write(chunk);
    });
  }
}

export function sleep(milliseconds: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, milliseconds));
}
