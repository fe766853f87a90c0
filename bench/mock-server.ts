import { startMockUpstream } from '../test/support/mock-upstream.ts';

// Standalone mock upstream for the benchmark: `tsx bench/mock-server.ts [port]`.
// Prints `READY <port>` once listening; exits on SIGTERM or SIGINT.
// MOCK_API_KEY (optional) makes it require `Authorization: Bearer <key>`.
// MOCK_CHUNKS (optional) sets the content chunks of a stream (default 5; a stream also has a
// role chunk, a finish chunk and, when asked, a usage chunk). MOCK_CHUNK_EACH_TURN=1 writes each
// chunk in its own event-loop turn, so the gateway reads them one by one (as ../shared/perf does).

const portArgument = process.argv[2];
const port = portArgument === undefined ? 0 : Number(portArgument);
if (!Number.isInteger(port) || port < 0 || port > 65_535) {
  process.stderr.write(`mock-server: invalid port ${String(portArgument)}\n`);
  process.exit(2);
}
const chunks = process.env.MOCK_CHUNKS === undefined || process.env.MOCK_CHUNKS === '' ? undefined : Number(process.env.MOCK_CHUNKS);
if (chunks !== undefined && (!Number.isInteger(chunks) || chunks < 1)) {
  process.stderr.write(`mock-server: invalid MOCK_CHUNKS ${String(process.env.MOCK_CHUNKS)}\n`);
  process.exit(2);
}

const apiKey = process.env.MOCK_API_KEY;
const mock = await startMockUpstream({
  record: false,
  port,
  ...(apiKey === undefined || apiKey === '' ? {} : { apiKey }),
  ...(chunks === undefined ? {} : { chunkCount: chunks }),
  chunkEachTurn: process.env.MOCK_CHUNK_EACH_TURN === '1',
});
process.stdout.write(`READY ${mock.port}\n`);

async function shutdown(): Promise<void> {
  await mock.close();
  process.exit(0);
}

process.once('SIGTERM', () => void shutdown());
process.once('SIGINT', () => void shutdown());
