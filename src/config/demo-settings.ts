/** Settings of `npm run demo` and of the standalone demo provider (src/demo/), from the environment. */
export interface DemoSettings {
  /** Where the demo provider listens: MOCK_HOST (default 0.0.0.0 standalone, 127.0.0.1 in the demo). */
  mockHost: string | null;
  /** MOCK_PORT (default 9000 standalone, a free port in the demo). */
  mockPort: number | null;
  /** The gateway's port in the demo: PORT, default 8080 (0 picks a free one). */
  gatewayPort: number;
  /** PATH and HOME, passed on to the gateway the demo starts (nothing else of the environment is). */
  path: string;
  home: string | null;
}

export function readDemoSettings(env: NodeJS.ProcessEnv = process.env): DemoSettings {
  return {
    mockHost: env['MOCK_HOST'] ?? null,
    mockPort: portOf(env, 'MOCK_PORT'),
    gatewayPort: portOf(env, 'PORT') ?? 8080,
    path: env['PATH'] ?? '',
    home: env['HOME'] ?? null,
  };
}

function portOf(env: NodeJS.ProcessEnv, name: string): number | null {
  const raw = env[name];
  if (raw === undefined || raw === '') return null;
  const port = Number(raw);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`${name} must be a port number (0-65535), got "${raw}"`);
  return port;
}
