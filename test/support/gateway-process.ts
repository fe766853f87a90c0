import { spawn, type ChildProcess, type SpawnOptions } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const projectRoot = resolve(import.meta.dirname, '..', '..');
const entryPoint = join(projectRoot, 'dist', 'main.js');

/** The master key of the usual test gateway, and the key it sends its mock upstream. */
export const MASTER_KEY = 'test-master-key';
export const UPSTREAM_KEY = 'sk-upstream';

/** The environment of a gateway with one `openai` instance in front of the mock. */
export function gatewayEnv(mock: { readonly url: string }, extra: Record<string, string> = {}): Record<string, string> {
  return { MASTER_KEY, OPENAI_API_KEY: UPSTREAM_KEY, OPENAI_BASE_URL: mock.url, ...extra };
}

/** A start on a loaded 2-core machine (8 suites at once) can take many seconds. */
export const gatewayStartTimeoutMs = 60_000;
/** How long `stop` waits for a graceful exit before it sends SIGKILL. */
const stopGraceMs = 45_000;

/**
 * Every child process the tests started and that has not exited yet. Whatever fails (a hook
 * that throws, a start that times out, a worker that ends early), each is killed when this
 * process exits, so that no gateway outlives the test run.
 */
const liveChildren = new Set<ChildProcess>();
let exitHookInstalled = false;

function killLiveChildren(): void {
  for (const running of liveChildren) running.kill('SIGKILL');
}

/**
 * Registers a child to be SIGKILLed if it is still running when the test process ends: on
 * exit, and on SIGTERM/SIGINT/SIGHUP, which end a process without its exit handlers (vitest
 * stops a worker with SIGTERM, then SIGKILL 500 ms later).
 */
export function killOnExit(child: ChildProcess): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.once('exit', killLiveChildren);
    for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP'] as const) {
      process.once(signal, () => {
        killLiveChildren();
        process.exit(128 + (signal === 'SIGTERM' ? 15 : signal === 'SIGINT' ? 2 : 1));
      });
    }
  }
  liveChildren.add(child);
  child.once('exit', () => liveChildren.delete(child));
}

/** Sends `signal`; after `graceMs` without an exit, SIGKILL. Resolves with the exit code (null when killed). */
export async function stopChild(child: ChildProcess, signal: NodeJS.Signals, graceMs = stopGraceMs): Promise<number | null> {
  if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  child.kill(signal);
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  try {
    return await exited;
  } finally {
    clearTimeout(timer);
  }
}

export interface GatewayOptions {
  /** Extra environment variables (the parent's environment is NOT inherited, except PATH/HOME). */
  env?: Record<string, string>;
  /** YAML written to a temporary config.yaml and passed with --config. */
  configYaml?: string;
  /** Extra command-line arguments. */
  args?: string[];
  /** Working directory; a fresh temporary folder when absent (pass one to restart on the same data). */
  cwd?: string;
  /** Milliseconds to wait for the listening line. */
  startTimeoutMs?: number;
  /**
   * Start it as an operator does, with `npm start` in the project (isolated from the user's
   * npm configuration; SQLite under `cwd`): `child` is then npm's process.
   */
  viaNpmStart?: boolean;
  /** Spawn in a process group of its own (to signal the group, as Ctrl-C in a terminal does). */
  detached?: boolean;
}

export interface GatewayProcess {
  readonly url: string;
  readonly port: number;
  /** The process's working directory (a fresh temporary folder: ./data/gateway.db lives here). */
  readonly cwd: string;
  readonly child: ChildProcess;
  /** Every line the process wrote to stdout and stderr so far. */
  readonly output: string[];
  /** Log lines parsed as JSON (pino). */
  logs(): Array<Record<string, unknown>>;
  /** Sends a signal and resolves with the exit code; SIGKILL (and null) when it does not exit in time. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
  /** SIGKILL unless it has exited already; for `finally` blocks and hooks (never throws). */
  kill(): Promise<void>;
}

/**
 * Starts the built gateway (`node dist/main.js`, exactly what `npm start` runs) on a free
 * port and resolves once it listens. Used by every end-to-end test.
 */
export async function startGateway(options: GatewayOptions = {}): Promise<GatewayProcess> {
  const args = [entryPoint, ...(options.args ?? [])];
  const cwd = options.cwd ?? mkdtempSync(join(tmpdir(), 'gateway-test-'));
  if (options.configYaml !== undefined) {
    const configPath = join(cwd, 'config.yaml');
    writeFileSync(configPath, options.configYaml);
    args.push('--config', configPath);
  }
  const env = { PATH: process.env['PATH'] ?? '', HOME: process.env['HOME'] ?? cwd, PORT: '0', LOG_LEVEL: 'info', ...options.env };
  const spawnOptions: SpawnOptions = { env, detached: options.detached === true, stdio: ['ignore', 'pipe', 'pipe'] };
  const child =
    options.viaNpmStart === true
      ? spawn('npm', ['start', '--', ...args.slice(1)], { ...spawnOptions, cwd: projectRoot, env: { ...npmEnvironment(cwd), ...env } })
      : spawn(process.execPath, args, { ...spawnOptions, cwd });
  killOnExit(child);
  const output: string[] = [];
  const exited = new Promise<number | null>((resolveExit) => child.once('exit', (code) => resolveExit(code)));
  const port = await waitForPort(child, exited, output, options.startTimeoutMs ?? gatewayStartTimeoutMs).catch(async (error: unknown) => {
    // A gateway that did not come up is not left running.
    await stopChild(child, 'SIGKILL');
    throw error;
  });
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    cwd,
    child,
    output,
    logs: () => output.flatMap((line) => (line.startsWith('{') ? [JSON.parse(line) as Record<string, unknown>] : [])),
    stop: (signal: NodeJS.Signals = 'SIGTERM') => stopChild(child, signal),
    async kill() {
      await stopChild(child, 'SIGKILL');
    },
  };
}

/** npm without the user's configuration or cache, and the gateway's SQLite file under `cwd`. */
function npmEnvironment(cwd: string): Record<string, string> {
  const userConfig = join(cwd, 'npmrc');
  const globalConfig = join(cwd, 'npmrc-global');
  writeFileSync(userConfig, '');
  writeFileSync(globalConfig, '');
  return {
    npm_config_userconfig: userConfig,
    npm_config_globalconfig: globalConfig,
    npm_config_cache: join(cwd, 'npm-cache'),
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    SQLITE_PATH: join(cwd, 'data', 'gateway.db'),
  };
}

function waitForPort(child: ChildProcess, exited: Promise<number | null>, output: string[], timeoutMs: number): Promise<number> {
  return new Promise<number>((resolvePort, reject) => {
    const timer = setTimeout(() => reject(new Error(`gateway did not start within ${timeoutMs} ms:\n${output.join('\n')}`)), timeoutMs);
    const onLine = (line: string): void => {
      output.push(line);
      const found = /"msg":"model gateway listening"/.test(line) ? /"port":(\d+)/.exec(line) : null;
      if (found?.[1]) {
        clearTimeout(timer);
        resolvePort(Number(found[1]));
      }
    };
    collectLines(child.stdout, onLine);
    collectLines(child.stderr, onLine);
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code} before listening:\n${output.join('\n')}`));
    });
  });
}

/** Runs the gateway expecting it to fail at startup; resolves with its exit code and output. */
export async function runGatewayExpectingFailure(options: GatewayOptions = {}): Promise<{ code: number | null; output: string }> {
  try {
    const gateway = await startGateway({ ...options, startTimeoutMs: options.startTimeoutMs ?? 30_000 });
    await gateway.stop();
    throw new Error('gateway started but was expected to fail');
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    const match = /exited with (\S+) before listening:\n([\s\S]*)$/.exec(message);
    if (!match) throw error;
    return { code: match[1] === 'null' ? null : Number(match[1]), output: match[2] ?? '' };
  }
}

function collectLines(stream: NodeJS.ReadableStream | null, onLine: (line: string) => void): void {
  let buffer = '';
  stream?.setEncoding('utf8');
  stream?.on('data', (chunk: string) => {
    buffer += chunk;
    let newline = buffer.indexOf('\n');
    while (newline !== -1) {
      onLine(buffer.slice(0, newline));
      buffer = buffer.slice(newline + 1);
      newline = buffer.indexOf('\n');
    }
  });
}
