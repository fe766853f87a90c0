import { SqliteWriter } from '../../src/storage/sqlite/sqlite-writer.ts';

// A process whose only work left is one insert on a writer thread that has not started yet
// (the last usage flush at shutdown): it must stay up until the row is written.
const path = process.argv[2];
if (path === undefined) throw new Error('usage: sqlite-writer-exit.ts <database>');
const writer = new SqliteWriter({ path, busyTimeoutMs: 5_000 });
void writer.insertRows('items', ['id', 'amount', 'flag'], [['at-exit', 1, true]]).then(() => process.stdout.write('inserted\n'));
