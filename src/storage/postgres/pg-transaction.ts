import type { Pool, PoolClient } from 'pg';

/**
 * Runs `body` between BEGIN and COMMIT on one pooled connection; rolls back and rethrows on error.
 * A connection whose ROLLBACK failed is discarded rather than returned to the pool.
 */
export async function inPgTransaction<Result>(pool: Pool, body: (client: PoolClient) => Promise<Result>): Promise<Result> {
  const client = await pool.connect();
  let broken = false;
  try {
    await client.query('BEGIN');
    const result = await body(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => {
      broken = true;
    });
    throw error;
  } finally {
    client.release(broken);
  }
}
