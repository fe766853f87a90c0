import { parentPort, workerData } from 'node:worker_threads';
import { openBetterSqlite3 } from './better-sqlite3-driver.ts';
import { configureConnection, insertBatchesNow, type StatementCache } from './insert-rows.ts';
import { toWriterFailure, type WriterReply, type WriterRequest, type WriterStart } from './writer-protocol.ts';

// The SQLite writer thread: its own connection to the gateway's database file, inserting the
// batches of rows the main thread posts (usage records, request log entries), so that B-tree and
// index work stays off the event loop that serves requests. One message in (the batches of one
// turn of the main thread, one transaction), one reply out, in order.

const port = parentPort;
if (port === null) throw new Error('sqlite-writer-thread runs as a worker thread');
const start = workerData as WriterStart;
const reply = (message: WriterReply): void => port.postMessage(message);

try {
  const database = await openBetterSqlite3(start.path, start.busyTimeoutMs);
  configureConnection(database, start.busyTimeoutMs);
  const statements: StatementCache = new Map();
  port.on('message', (request: WriterRequest) => {
    if (request.kind === 'close') {
      database.close();
      port.close();
      return;
    }
    const errors = insertBatchesNow(database, statements, request.batches);
    const results = request.batches.map(({ id }, index) => ({ id, error: errors[index] === null ? null : toWriterFailure(errors[index]) }));
    reply({ kind: 'done', results });
  });
  reply({ kind: 'ready' });
} catch (error) {
  reply({ kind: 'start_failed', error: toWriterFailure(error) });
  port.close();
}
