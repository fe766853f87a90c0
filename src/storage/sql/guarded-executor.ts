import { GatewayError } from '../../errors/gateway-error.ts';
import type { SqlExecutor } from './sql-executor.ts';

// Node socket errors, PostgreSQL connection classes (08 connection exception, 53 insufficient
// resources, 57 operator intervention) and SQLite's busy / I/O / full / cannot-open codes.
const unavailableCodes = /^(E[A-Z]+|08...|53...|57...|SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY)\w*)$/;
const unavailableMessages = /connection terminated|connection timeout|timeout exceeded|database is locked|pool.*(ended|closed)/i;

/** The 503 of CONTRACT section 4 for a database that does not answer; the driver's message stays in the log. */
export class StorageUnavailableError extends GatewayError {
  constructor(cause: unknown) {
    super('provider_error', 'the database is unavailable', { status: 503, code: 'storage_unavailable', cause });
  }
}

export function isStorageUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = (error as { code?: unknown }).code;
  return (typeof code === 'string' && unavailableCodes.test(code)) || unavailableMessages.test(error.message);
}

/**
 * Wraps an executor so that a database that cannot be reached surfaces as 503
 * `storage_unavailable` instead of an internal error; other failures (bugs) pass unchanged.
 */
export function guardExecutor(executor: SqlExecutor): SqlExecutor {
  const guard = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (error) {
      throw isStorageUnavailable(error) ? new StorageUnavailableError(error) : error;
    }
  };
  return {
    dialect: executor.dialect,
    placeholder: (position) => executor.placeholder(position),
    query: (text, values) => guard(() => executor.query(text, values)),
    execute: (text, values) => guard(() => executor.execute(text, values)),
    insertRows: (table, columns, rows) => guard(() => executor.insertRows(table, columns, rows)),
    ping: () => executor.ping(),
    close: () => executor.close(),
  };
}
