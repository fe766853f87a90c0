import type {
  ApiKeyActivity,
  RequestLogEntry,
  RequestLogPage,
  RequestLogQuery,
  RequestLogStore,
  RequestStats,
  RequestStatsQuery,
} from '../../request-log/request-log-store.ts';
import { apiKeyActivity, requestStats } from './request-log-aggregates.ts';
import type { SqlExecutor } from './sql-executor.ts';
import { SqlParameters, toNumber } from './sql-executor.ts';
import type { RequestLogRow } from './request-log-row.ts';
import { requestLogColumns, requestLogEntryFromRow, requestLogListColumns, requestLogRowValues } from './request-log-row.ts';
import { userPathSubtreeCondition } from './user-path-subtree.ts';

const listSelect = requestLogListColumns.join(', ');
/** A subtree or request id prefix with at least this many rows is listed in time order rather than sorted. */
const largeListingRows = 5_000;

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
    const prefixDrives = query.text !== undefined && !(await this.#largePrefix(query.text));
    const subtreeDrives = query.userPath !== undefined && !prefixDrives && !equalityFilters(query).some(indexedFor);
    const scanByTime = subtreeDrives && (await this.#largeSubtree(query.userPath ?? '/'));
    const where = requestLogWhere(query, parameters, this.#executor.dialect, { scanByTime, prefixDrives });
    const limit = parameters.add(query.limit + 1);
    const text = `SELECT ${listSelect} FROM request_log ${where} ORDER BY ts DESC, row_id DESC LIMIT ${limit}`;
    const rows = await this.#executor.query<RequestLogRow>(text, parameters.values);
    const entries = rows.slice(0, query.limit).map(requestLogEntryFromRow);
    const last = entries[entries.length - 1];
    const next = rows.length > query.limit && last !== undefined ? { time: last.time, rowId: last.rowId } : null;
    return { entries, next };
  }

  /**
   * Whether a user path subtree holds many rows. The (user_path_lower, ts, row_id) index cannot
   * give a subtree's rows in time order (several paths), so its matches are sorted: cheap for a
   * small subtree, not for one holding most of the log, which is read in time order instead
   * (its rows are dense there). Counting up to the threshold on the index costs a millisecond.
   */
  async #largeSubtree(userPath: string): Promise<boolean> {
    const parameters = new SqlParameters(this.#executor);
    const subtree = userPathSubtreeCondition(userPath, parameters);
    return subtree !== null && this.#atLeastLarge([cappedCount(subtree, parameters)], parameters);
  }

  /**
   * Whether a request id prefix matches many rows (a short prefix of the gateway's time-ordered
   * ids, `01`, matches most of the log). Its two ranges (row key, request id index) give their
   * matches out of time order, so they are sorted: cheap for a few, 0.1-0.4 s for 100,000 at
   * 100,000 rows on SQLite. Such a prefix is read in time order instead, where its rows are
   * dense. Counting up to the threshold on both ranges costs about a millisecond.
   */
  async #largePrefix(prefix: string): Promise<boolean> {
    const parameters = new SqlParameters(this.#executor);
    const keyed = cappedCount(`${prefixRange('row_id', prefix, parameters)} AND request_id = row_id`, parameters);
    const inbound = cappedCount(`${prefixRange('request_id', prefix, parameters)} AND request_id <> row_id`, parameters);
    return this.#atLeastLarge([keyed, inbound], parameters);
  }

  /** Whether the capped counts add up to `largeListingRows`. */
  async #atLeastLarge(counts: readonly string[], parameters: SqlParameters): Promise<boolean> {
    const rows = await this.#executor.query<{ matched: number | string }>(`SELECT ${counts.join(' + ')} AS matched`, parameters.values);
    return toNumber(rows[0]?.matched ?? 0) >= largeListingRows;
  }

  /**
   * The newest entry of a request id: the row keyed by it (a request the gateway named) or one
   * the request id index holds (an inbound X-Request-ID, whose row has a key of its own).
   */
  async find(requestId: string): Promise<RequestLogEntry | null> {
    const parameters = new SqlParameters(this.#executor);
    const columns = requestLogColumns.join(', ');
    const text = `SELECT ${columns} FROM request_log WHERE row_id = ${parameters.add(requestId)} AND request_id = row_id
      UNION ALL SELECT ${columns} FROM request_log WHERE request_id = ${parameters.add(requestId)} AND request_id <> row_id
      ORDER BY ts DESC, row_id DESC LIMIT 1`;
    const rows = await this.#executor.query<RequestLogRow>(text, parameters.values);
    const row = rows[0];
    return row === undefined ? null : requestLogEntryFromRow(row);
  }

  stats(query: RequestStatsQuery): Promise<RequestStats> {
    return requestStats(this.#executor, query);
  }

  keyActivity(from: number): Promise<ApiKeyActivity[]> {
    return apiKeyActivity(this.#executor, from);
  }

  async deleteOlderThan(before: number, limit: number): Promise<number> {
    const parameters = new SqlParameters(this.#executor);
    const text = `DELETE FROM request_log WHERE row_id IN
      (SELECT row_id FROM request_log WHERE ts < ${parameters.add(before)} ORDER BY ts LIMIT ${parameters.add(limit)})`;
    return toNumber(await this.#executor.execute(text, parameters.values));
  }
}

/** The rows matching `condition`, counted up to `largeListingRows` (a scalar subquery; an index range stops there). */
function cappedCount(condition: string, parameters: SqlParameters): string {
  return `(SELECT COUNT(*) FROM (SELECT 1 FROM request_log WHERE ${condition} LIMIT ${parameters.add(largeListingRows)}) AS probe)`;
}

type ColumnKind = 'text' | 'integer' | 'boolean';

/**
 * How a listing reads its rows: a large user path subtree in time order (`scanByTime`), a request
 * id prefix through its two ranges (`prefixDrives`) unless it is large, then in time order too.
 */
interface ListingPlan {
  scanByTime: boolean;
  prefixDrives: boolean;
}

/**
 * A column the planner cannot match to an index: SQLite's unary `+`, an identity expression
 * on PostgreSQL. Filters other than the driving one are written this way.
 */
function unindexed(column: string, kind: ColumnKind, dialect: SqlExecutor['dialect']): string {
  if (dialect === 'sqlite') return `+${column}`;
  if (kind === 'text') return `(${column} || '')`;
  return kind === 'integer' ? `(${column} + 0)` : `(${column} IS TRUE)`;
}

type Filter = [column: string, kind: ColumnKind, value: string | number | boolean];

/**
 * Partial indexes (SQLite migration 14) leave out the common value of a column (a 200, a 2xx, no error
 * code, no cache hit), so that most rows skip four index inserts (ADR 23). A filter on the common
 * value has no index: it never drives a listing, which reads such rows in time order, where
 * they are dense.
 */
function indexedFor([column, , value]: Filter): boolean {
  if (column === 'status') return value !== 200;
  if (column === 'status_class') return value !== 2;
  return column !== 'cache_hit' || value === true;
}

/** The condition of the filter's partial index, repeated in the query so that both planners may use it. */
function partialIndexCondition([column]: Filter, dialect: SqlExecutor['dialect']): string | null {
  if (column === 'status') return 'status <> 200';
  if (column === 'status_class') return 'status_class <> 2';
  if (column === 'error_code') return 'error_code IS NOT NULL';
  if (column === 'cache_hit') return `cache_hit = ${dialect === 'sqlite' ? '1' : 'TRUE'}`;
  return null;
}

/**
 * Equality filters, the most selective first: the first one an index serves drives the listing
 * (see {@link indexedFor}); filters on common values come last.
 */
function equalityFilters(query: RequestLogQuery): Filter[] {
  const filters: [string, ColumnKind, string | number | boolean | undefined][] = [
    ['api_key_id', 'text', query.apiKeyId],
    ['error_code', 'text', query.errorCode],
    ['model', 'text', query.model],
    ['provider', 'text', query.provider],
    ['status', 'integer', query.status !== undefined && 'exact' in query.status ? query.status.exact : undefined],
    ['status_class', 'integer', query.status !== undefined && 'statusClass' in query.status ? query.status.statusClass : undefined],
    ['endpoint', 'text', query.endpoint],
    ['cache_hit', 'boolean', query.cacheHit],
  ];
  const given = filters.filter((filter): filter is Filter => filter[2] !== undefined);
  return given.filter(indexedFor).concat(given.filter((filter) => !indexedFor(filter)));
}

/**
 * The WHERE clause (with its keyword) of a listing. One filter drives it: a request id prefix (unless large),
 * else the first equality filter (its `(column, ts, row_id)` index reads the page in order, at
 * most until `limit` rows matched), else the user path subtree (or, for a large one, time
 * order: `scanByTime`); the others are plain filters
 * on the rows read. Left to itself a planner may combine two indexes and sort every match
 * (correlated filters such as status 429 and code rate_limit_exceeded: 0.2 s at 1,000,000 rows).
 */
function requestLogWhere(query: RequestLogQuery, parameters: SqlParameters, dialect: SqlExecutor['dialect'], plan: ListingPlan): string {
  const { scanByTime, prefixDrives } = plan;
  const conditions: string[] = [];
  if (query.from !== undefined) conditions.push(`ts >= ${parameters.add(query.from)}`);
  if (query.to !== undefined) conditions.push(`ts < ${parameters.add(query.to)}`);
  let driven = false;
  if (query.text !== undefined) {
    conditions.push(
      prefixDrives
        ? requestIdPrefix(query.text, parameters)
        : prefixRange(unindexed('request_id', 'text', dialect), query.text, parameters),
    );
    driven = prefixDrives;
  }
  for (const filter of equalityFilters(query)) {
    const [column, kind, value] = filter;
    const drives: boolean = !driven && indexedFor(filter);
    conditions.push(`${drives ? column : unindexed(column, kind, dialect)} = ${parameters.add(value)}`);
    const partial = drives ? partialIndexCondition(filter, dialect) : null;
    if (partial !== null) conditions.push(partial);
    driven ||= drives;
  }
  if (query.userPath !== undefined) {
    const column = driven || scanByTime ? unindexed('user_path_lower', 'text', dialect) : 'user_path_lower';
    const subtree = userPathSubtreeCondition(query.userPath, parameters, column);
    if (subtree !== null) conditions.push(subtree);
  }
  const after = query.after;
  if (after !== undefined) {
    // A row-value comparison: both dialects walk the (…, ts, row_id) indexes with it.
    conditions.push(`(ts, row_id) < (${parameters.add(after.time)}, ${parameters.add(after.rowId)})`);
  }
  return conditions.length === 0 ? '' : `WHERE ${conditions.join(' AND ')}`;
}

/**
 * A prefix of the request id: two ranges, one over the row key (the rows of requests the gateway
 * named, whose key is their request id) and one over the request id index (which holds only the
 * others, ADR 23, migration 15). Only for a prefix few rows match (`#largePrefix`): they are sorted.
 */
function requestIdPrefix(prefix: string, parameters: SqlParameters): string {
  const keyed = prefixRange('row_id', prefix, parameters);
  return `((${keyed} AND request_id = row_id) OR (${prefixRange('request_id', prefix, parameters)} AND request_id <> row_id))`;
}

/** `column` starts with `prefix`, as a range (SQLite's placeholders are positional: each use is a parameter of its own). */
function prefixRange(column: string, prefix: string, parameters: SqlParameters): string {
  return `${column} >= ${parameters.add(prefix)} AND ${column} < ${parameters.add(`${prefix}\uffff`)}`;
}
