import { startMockUpstream } from '../test/support/mock-upstream.ts';

// Standalone mock upstream for the benchmark: `tsx bench/mock-server.ts [port]`.
// Prints `READY <port>` once listening; exits on SIGTERM or SIGINT.
// MOCK_API_KEY (optional) makes it require `Authorization: Bearer <key>`. MOCK_CHUNK_COUNT
// (content chunks per stream, default 5) and MOCK_CHUNK_TURNS=true (each frame written in its
// own event-loop turn, as ../shared/perf/mock.mjs does) shape the streams.

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
  chunkCount: Number(process.env.MOCK_CHUNK_COUNT ?? 5),
  chunkTurns: process.env.MOCK_CHUNK_TURNS === 'true',
  ...(apiKey === undefined || apiKey === '' ? {} : { apiKey }),
});
process.stdout.write(`READY ${mock.port}\n`);

async function shutdown(): Promise<void> {
  await mock.close();
  process.exit(0);
}

process.once('SIGTERM', () => void shutdown());
process.once('SIGINT', () => void shutdown());
