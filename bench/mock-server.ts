import { startMockUpstream } from '../test/support/mock-upstream.ts';

// Standalone mock upstream for the benchmark: `tsx bench/mock-server.ts [port]`.
// Prints `READY <port>` once listening; exits on SIGTERM or SIGINT.
// MOCK_API_KEY (optional) makes it require `Authorization: Bearer <key>`.

const portArgument = process.argv[2];
const port = portArgument === undefined ? 0 : Number(portArgument);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  process.stderr.write(`mock-server: invalid port ${String(portArgument)}\n`);
  process.exit(2);
}

const apiKey = process.env.MOCK_API_KEY;
const mock = await startMockUpstream({
  record: false,
  port,
  ...(apiKey === undefined || apiKey === '' ? {} : { apiKey }),
});
process.stdout.write(`READY ${mock.port}\n`);

async function shutdown(): Promise<void> {
  await mock.close();
  process.exit(0);
}

process.once('SIGTERM', () => void shutdown());
process.once('SIGINT', () => void shutdown());
