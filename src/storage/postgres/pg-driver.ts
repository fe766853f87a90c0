import type pg from 'pg';

/** The `pg` module, imported on first use so that a SQLite deployment never loads it. */
export async function loadPg(): Promise<typeof pg> {
  const { default: module } = await import('pg');
  return module;
}
