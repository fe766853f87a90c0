import type { Pool } from 'pg';
import type { Storage } from '../storage.ts';
import { errorMessage } from '../sql/sql-executor.ts';
import { createSqlStorage } from '../sql/sql-storage.ts';
import { loadPg } from './pg-driver.ts';
import { migratePostgres } from './migrate-postgres.ts';
import { postgresMigrations } from './migrations.ts';
import { PostgresExecutor } from './postgres-executor.ts';

const poolSize = 10;
const connectTimeoutMs = 5_000;

/**
 * Opens a pool on `databaseUrl`, checks that the database answers, and brings its schema up to
 * date. Errors name the host and database, never the password.
 */
export async function openPostgresStorage(databaseUrl: string): Promise<Storage> {
  const { Pool } = await loadPg();
  const pool = new Pool({
    connectionString: databaseUrl,
    max: poolSize,
    connectionTimeoutMillis: connectTimeoutMs,
    idleTimeoutMillis: 30_000,
  });
  // An idle connection that the server drops emits 'error' on the pool; without a listener it would
  // crash the process. The next query reconnects or fails on its own.
  pool.on('error', () => {});
  const where = describeDatabase(databaseUrl);
  await step(pool, databaseUrl, `Cannot connect to PostgreSQL at ${where}`, () => pool.query('SELECT 1'));
  await step(pool, databaseUrl, `Cannot migrate the PostgreSQL database at ${where}`, () => migratePostgres(pool, postgresMigrations));
  return createSqlStorage(new PostgresExecutor(pool));
}

async function step(pool: Pool, databaseUrl: string, failure: string, body: () => Promise<unknown>): Promise<void> {
  try {
    await body();
  } catch (error) {
    await pool.end().catch(() => {});
    throw new Error(`${failure}: ${withoutPassword(errorMessage(error), databaseUrl)}`, { cause: error });
  }
}

/** `host:port/database` of a connection URL, without credentials. */
export function describeDatabase(databaseUrl: string): string {
  let url: URL;
  try {
    url = new URL(databaseUrl);
  } catch {
    return '(unparsable database URL)';
  }
  const host = url.hostname || url.searchParams.get('host') || 'localhost';
  const database = decodeURIComponent(url.pathname.replace(/^\//, '')) || '(default database)';
  return `${host}:${url.port || '5432'}/${database}`;
}

function withoutPassword(message: string, databaseUrl: string): string {
  let password = '';
  try {
    password = decodeURIComponent(new URL(databaseUrl).password);
  } catch {
    return message;
  }
  return password === '' ? message : message.split(password).join('***');
}
