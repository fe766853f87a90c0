import type { RequestLogEntry, RequestLogPage, RequestLogQuery, RequestLogStore } from '../../request-log/request-log-store.ts';
import type { SqlExecutor } from './sql-executor.ts';
import { SqlParameters, toNumber } from './sql-executor.ts';
import type { RequestLogRow } from './request-log-row.ts';
import { requestLogColumns, requestLogEntryFromRow, requestLogListColumns, requestLogRowValues } from './request-log-row.ts';
import { userPathSubtreeCondition } from './user-path-subtree.ts';

const listSelect = requestLogListColumns.join(', ');

/** RequestLogStore over any SQL dialect. Pages are keyset pages over (ts, row_id), newest first. */
export class SqlRequestLogStore implements RequestLogStore {
  readonly #executor: SqlExecutor;

  constructor(executor: SqlExecutor) {
    this.#executor = executor;
  }

  async insertMany(entries: readonly RequestLogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.#executor.insertRows('request_log', requestLogColumns, entries.map(requestLogRowValues));
  }

  async list(query: RequestLogQuery): Promise<RequestLogPage> {
    const parameters = new SqlParameters(this.#executor);
    const where = requestLogWhere(query, parameters);
    const limit = parameters.add(query.limit + 1);
    const text = `SELECT ${listSelect} FROM request_log ${where} ORDER BY ts DESC, row_id DESC LIMIT ${limit}`;
    const rows = await this.#executor.query<RequestLogRow>(text, parameters.values);
    const entries = rows.slice(0, query.limit).map(requestLogEntryFromRow);
    const last = entries[entries.length - 1];
    const next = rows.length > query.limit && last !== undefined ? { time: last.time, rowId: last.rowId } : null;
    return { entries, next };
  }

  async find(requestId: string): Promise<RequestLogEntry | null> {
    const parameters = new SqlParameters(this.#executor);
    const text = `SELECT ${requestLogColumns.join(', ')} FROM request_log WHERE request_id = ${parameters.add(requestId)}
      ORDER BY ts DESC, row_id DESC LIMIT 1`;
    const rows = await this.#executor.query<RequestLogRow>(text, parameters.values);
    const row = rows[0];
    return row === undefined ? null : requestLogEntryFromRow(row);
  }

  async deleteOlderThan(before: number, limit: number): Promise<number> {
    const parameters = new SqlParameters(this.#executor);
    const text = `DELETE FROM request_log WHERE row_id IN
      (SELECT row_id FROM request_log WHERE ts < ${parameters.add(before)} ORDER BY ts LIMIT ${parameters.add(limit)})`;
    return toNumber(await this.#executor.execute(text, parameters.values));
  }
}

/** The WHERE clause (with its keyword) of a listing: filters, then the cursor. */
function requestLogWhere(query: RequestLogQuery, parameters: SqlParameters): string {
  const conditions: string[] = [];
  const equal = (column: string, value: string | boolean | undefined): void => {
    if (value !== undefined) conditions.push(`${column} = ${parameters.add(value)}`);
  };
  if (query.from !== undefined) conditions.push(`ts >= ${parameters.add(query.from)}`);
  if (query.to !== undefined) conditions.push(`ts < ${parameters.add(query.to)}`);
  const subtree = query.userPath === undefined ? null : userPathSubtreeCondition(query.userPath, parameters);
  if (subtree !== null) conditions.push(subtree);
  equal('api_key_id', query.apiKeyId);
  equal('provider', query.provider);
  equal('model', query.model);
  equal('error_code', query.errorCode);
  equal('endpoint', query.endpoint);
  equal('cache_hit', query.cacheHit);
  const status = query.status;
  if (status !== undefined && 'exact' in status) conditions.push(`status = ${parameters.add(status.exact)}`);
  // A class is an equality on its own column, so its index reads the page in (ts, row_id) order.
  if (status !== undefined && 'statusClass' in status) conditions.push(`status_class = ${parameters.add(status.statusClass)}`);
  if (query.text !== undefined) {
    // A prefix of the request id: a range over its index (ids are time-ordered, so few rows match).
    const prefix = query.text;
    conditions.push(`request_id >= ${parameters.add(prefix)} AND request_id < ${parameters.add(`${prefix}\uffff`)}`);
  }
  const after = query.after;
  if (after !== undefined) {
    // A row-value comparison: both dialects walk the (…, ts, row_id) indexes with it.
    conditions.push(`(ts, row_id) < (${parameters.add(after.time)}, ${parameters.add(after.rowId)})`);
  }
  return conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
}
