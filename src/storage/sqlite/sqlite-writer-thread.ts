import { parentPort, workerData } from 'node:worker_threads';
import { openBetterSqlite3 } from './better-sqlite3-driver.ts';
import { configureConnection, insertRowsNow, type StatementCache } from './insert-rows.ts';
import { toWriterFailure, type WriterReply, type WriterRequest, type WriterStart } from './writer-protocol.ts';

// The SQLite writer thread: its own connection to the gateway's database file, inserting the
// batches of rows the main thread posts (usage records, request log entries), so that B-tree and
// index work stays off the event loop that serves requests. One message in, one reply out, in order.

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
    try {
      insertRowsNow(database, statements, request.table, request.columns, request.rows);
      reply({ kind: 'done', id: request.id, error: null });
    } catch (error) {
      reply({ kind: 'done', id: request.id, error: toWriterFailure(error) });
    }
  });
  reply({ kind: 'ready' });
} catch (error) {
  reply({ kind: 'start_failed', error: toWriterFailure(error) });
  port.close();
}
