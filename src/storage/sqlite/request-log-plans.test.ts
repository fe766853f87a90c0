import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { RequestLogQuery } from '../../request-log/request-log-store.ts';
import type { SqlExecutor, SqlValue } from '../sql/sql-executor.ts';
import { SqlRequestLogStore } from '../sql/sql-request-log-store.ts';
import { requestLogEntry } from '../testing/fixtures.ts';
import { openBetterSqlite3, type SqliteDatabase } from './better-sqlite3-driver.ts';
import { toSqliteValue } from './insert-rows.ts';
import { migrateSqlite } from './migrate-sqlite.ts';
import { sqliteMigrations } from './migrations.ts';
import { SqliteExecutor } from './sqlite-executor.ts';

// Migration 14 made four request-log indexes partial (ADR 23). A listing on a value they hold
// must still read its page from that index, in order; one on the common value they leave out
// reads the time index. Checked on SQLite's own plan for the statements the store runs.
describe('request log listings on SQLite: which index reads the page', () => {
  let database: SqliteDatabase;
  let store: SqlRequestLogStore;
  const statements: { text: string; values: readonly SqlValue[] }[] = [];

  beforeEach(async () => {
    database = await openBetterSqlite3(':memory:', 5_000);
    migrateSqlite(database, sqliteMigrations);
    const executor = new SqliteExecutor(database);
    const recording: SqlExecutor = {
      dialect: 'sqlite',
      placeholder: () => executor.placeholder(),
      query: async <Row>(text: string, values: readonly SqlValue[] = []): Promise<Row[]> => {
        statements.push({ text, values });
        return executor.query<Row>(text, values);
      },
      execute: (text, values) => executor.execute(text, values),
      insertRows: (table, columns, rows) => executor.insertRows(table, columns, rows),
      ping: () => executor.ping(),
      close: () => executor.close(),
    };
    store = new SqlRequestLogStore(recording);
  });

  afterEach(() => {
    statements.length = 0;
    database.close();
  });

  async function plan(query: Partial<RequestLogQuery>): Promise<string> {
    statements.length = 0;
    await store.list({ limit: 50, ...query });
    const listing = statements.find((statement) => statement.text.includes('ORDER BY ts DESC'));
    if (listing === undefined) throw new Error('no listing statement');
    const rows = database.prepare(`EXPLAIN QUERY PLAN ${listing.text}`).all(...listing.values.map(toSqliteValue));
    return (rows as { detail: string }[]).map((row) => row.detail).join('; ');
  }

  it.each([
    [{ status: { exact: 502 } }, 'request_log_status'],
    [{ status: { statusClass: 4 } }, 'request_log_status_class'],
    [{ errorCode: 'rate_limit_exceeded' }, 'request_log_error_code'],
    [{ cacheHit: true }, 'request_log_cache_hit'],
    [{ status: { exact: 200 } }, 'request_log_ts'],
    [{ status: { statusClass: 2 } }, 'request_log_ts'],
    [{ cacheHit: false }, 'request_log_ts'],
    [{ status: { exact: 200 }, endpoint: '/v1/embeddings' }, 'request_log_endpoint'],
    [{ apiKeyId: 'key-1' }, 'request_log_api_key_id'],
  ] as const)('%j reads %s, without sorting', async (query, index) => {
    const detail = await plan(query);
    expect(detail).toMatch(new RegExp(`INDEX ${index}\\b`));
    expect(detail).not.toContain('TEMP B-TREE');
  });

  // Migration 15 (ADR 23): the request id index holds only rows not keyed by their request id.
  it('a request id prefix reads the row key and the request id index (a range on each), then sorts the few matches', async () => {
    const detail = await plan({ text: '019a', after: { time: 5, rowId: 'x' } });
    expect(detail).toContain('MULTI-INDEX OR');
    expect(detail).toMatch(/INDEX sqlite_autoindex_request_log_1 \(row_id>\? AND row_id<\?\)/);
    expect(detail).toMatch(/INDEX request_log_request_id \(request_id>\? AND request_id<\?\)/);
  });

  it('a request id prefix that matches many rows reads the time index, without sorting', async () => {
    const rows = Array.from({ length: 5_000 }, (_, index) => requestLogEntry({ id: `019a-${index}`, rowId: `019a-${index}` }));
    await store.insertMany(rows);
    const detail = await plan({ text: '019a' });
    expect(detail).toMatch(/INDEX request_log_ts\b/);
    expect(detail).not.toContain('TEMP B-TREE');
  });

  it('find reads the row key and the request id index, and key activity reads only the key index', async () => {
    const explain = (statement: { text: string; values: readonly SqlValue[] } | undefined): string =>
      (
        database.prepare(`EXPLAIN QUERY PLAN ${statement?.text ?? ''}`).all(...(statement?.values ?? []).map(toSqliteValue)) as {
          detail: string;
        }[]
      )
        .map((row) => row.detail)
        .join('; ');
    statements.length = 0;
    await store.find('019a');
    const [find] = statements;
    expect(explain(find)).toMatch(
      /USING INDEX sqlite_autoindex_request_log_1 \(row_id=\?\).*USING INDEX request_log_request_id \(request_id=\?\)/,
    );
    statements.length = 0;
    await store.keyActivity(0);
    const [activity] = statements;
    expect(explain(activity)).toContain('USING COVERING INDEX request_log_api_key_id');
  });
});
