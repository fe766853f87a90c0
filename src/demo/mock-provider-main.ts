import { readDemoSettings } from '../config/demo-settings.ts';
import { startDemoProvider } from './mock-provider.ts';

/**
 * The demo provider on its own (the mock upstream of docker-compose.yaml):
 * `node dist/demo/mock-provider-main.js`, listening on MOCK_HOST (0.0.0.0) and MOCK_PORT (9000).
 */
async function main(): Promise<void> {
  const settings = readDemoSettings();
  const host = settings.mockHost ?? '0.0.0.0';
  const provider = await startDemoProvider(host, settings.mockPort ?? 9000);
  process.stdout.write(`demo provider listening on ${host}:${provider.port}\n`);
  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      void provider.close().then(() => process.exit(0));
      provider.server.closeAllConnections();
    });
  }
}

await main();
