import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { readDemoSettings, type DemoSettings } from '../config/demo-settings.ts';
import { demoModel, startDemoProvider, type DemoProvider } from './mock-provider.ts';
import { demoBanner } from './banner.ts';

/** The key the demo gateway accepts (its master key; it listens on loopback only). */
export const demoKey = 'demo-key';
const providerName = 'demo';
const gatewayEntry = fileURLToPath(new URL('../main.js', import.meta.url));
/** pino's numeric level of `warn`: such lines of the gateway are shown, quieter ones are not. */
const warnLevel = 40;

/**
 * `npm run demo`: starts the bundled demo provider and the built gateway in front of it
 * (loopback, SQLite in a temporary folder), prints a curl command and an `openai` snippet,
 * and stops both on Ctrl-C or SIGTERM.
 */
async function main(): Promise<void> {
  const settings = readDemoSettings();
  const provider = await startDemoProvider(settings.mockHost ?? '127.0.0.1', settings.mockPort ?? 0);
  const workDir = mkdtempSync(join(tmpdir(), 'model-gateway-demo-'));
  const gateway = spawnGateway(provider, workDir, settings);
  const finish = async (code: number): Promise<never> => {
    await provider.close();
    rmSync(workDir, { recursive: true, force: true });
    process.exit(code);
  };
  gateway.once('exit', (code) => void finish(code ?? 1));
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.on(signal, () => {
      if (gateway.exitCode === null) gateway.kill('SIGTERM');
    });
  }
  watchOutput(gateway, (port) => process.stdout.write(demoBanner(`http://127.0.0.1:${port}`, demoKey, `${providerName}/${demoModel}`)));
}

function spawnGateway(provider: DemoProvider, workDir: string, settings: DemoSettings): ChildProcess {
  const configPath = join(workDir, 'config.yaml');
  writeFileSync(
    configPath,
    [
      'providers:',
      `  ${providerName}:`,
      '    type: openai-compatible',
      `    base_url: ${provider.baseUrl}`,
      `    models: [${demoModel}]`,
      '',
    ].join('\n'),
  );
  const env = {
    PATH: settings.path,
    HOME: settings.home ?? workDir,
    HOST: '127.0.0.1',
    PORT: String(settings.gatewayPort),
    MASTER_KEY: demoKey,
    SQLITE_PATH: join(workDir, 'gateway.db'),
    LOG_LEVEL: 'info',
  };
  return spawn(process.execPath, [gatewayEntry, '--config', configPath], { cwd: workDir, env, stdio: ['ignore', 'pipe', 'pipe'] });
}

/** Calls `onListening` with the port once the gateway listens; passes its warnings and errors on. */
function watchOutput(gateway: ChildProcess, onListening: (port: number) => void): void {
  const onLine = (line: string): void => {
    const entry = parseLogLine(line);
    if (entry === null) {
      if (line.trim() !== '') process.stderr.write(`${line}\n`);
      return;
    }
    const port = listeningPort(entry);
    if (port !== null) onListening(port);
    else if (typeof entry['level'] === 'number' && entry['level'] >= warnLevel) process.stderr.write(`${line}\n`);
  };
  for (const stream of [gateway.stdout, gateway.stderr]) {
    let buffer = '';
    stream?.setEncoding('utf8');
    stream?.on('data', (chunk: string) => {
      buffer += chunk;
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      lines.forEach(onLine);
    });
  }
}

function listeningPort(entry: Record<string, unknown>): number | null {
  if (entry['msg'] !== 'model gateway listening') return null;
  const address = entry['address'] as { port?: unknown } | null | undefined;
  return typeof address?.port === 'number' ? address.port : null;
}

function parseLogLine(line: string): Record<string, unknown> | null {
  if (!line.startsWith('{')) return null;
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null;
  }
}

await main();
