import type { ItemMatch, ResponseItem, ResponsePointer, ResponseStore, StoredResponse } from '../../responses/response-store.ts';
import type { SqlExecutor, SqlValue } from './sql-executor.ts';
import { SqlParameters, toNumber } from './sql-executor.ts';

const responseColumns = 'id, user_path, user_path_lower, previous_response_id, provider, model, response_json, created_at, expires_at';
const itemColumns = ['response_id', 'kind', 'seq', 'item_id', 'item_json', 'expires_at'] as const;

interface ResponseRow {
  readonly id: string;
  readonly user_path: string;
  readonly previous_response_id: string | null;
  readonly provider: string;
  readonly model: string;
  readonly response_json: string;
  readonly created_at: number | string;
  readonly expires_at: number | string;
}

interface PointerRow {
  readonly id: string;
  readonly instance: string;
  readonly user_path: string;
  readonly created_at: number | string;
  readonly expires_at: number | string;
}

interface ItemRow {
  readonly response_id: string;
  readonly kind: string;
  readonly item_json: string;
}

interface MatchRow extends ItemRow {
  readonly user_path: string;
  readonly created_at: number | string;
}

/**
 * ResponseStore over any SQL dialect. Items are written first and the response row last: a
 * reader joins items to their response, so half a write is never visible (orphans expire).
 */
export class SqlResponseStore implements ResponseStore {
  readonly #executor: SqlExecutor;

  constructor(executor: SqlExecutor) {
    this.#executor = executor;
  }

  async insert(response: StoredResponse): Promise<void> {
    const rows: SqlValue[][] = [
      ...response.input.map((item, index) => itemRow(response, 'input', index, item)),
      ...response.output.map((item, index) => itemRow(response, 'output', index, item)),
    ];
    if (rows.length > 0) await this.#executor.insertRows('response_items', itemColumns, rows);
    const parameters = new SqlParameters(this.#executor);
    const values = [
      response.id,
      response.userPath,
      response.userPath.toLowerCase(),
      response.previousResponseId,
      response.provider,
      response.model,
      JSON.stringify(response.response),
      response.createdAt,
      response.expiresAt,
    ]
      .map((value) => parameters.add(value))
      .join(', ');
    await this.#executor.execute(`INSERT INTO responses (${responseColumns}) VALUES (${values})`, parameters.values);
  }

  async chain(id: string, now: number, depth: number): Promise<StoredResponse[]> {
    const parameters = new SqlParameters(this.#executor);
    const text = `WITH RECURSIVE chain (id, depth) AS (
        SELECT id, 0 FROM responses WHERE id = ${parameters.add(id)} AND expires_at > ${parameters.add(now)}
        UNION ALL
        SELECT r.id, c.depth + 1 FROM chain c
          JOIN responses p ON p.id = c.id
          JOIN responses r ON r.id = p.previous_response_id
          WHERE r.expires_at > ${parameters.add(now)} AND c.depth + 1 < ${parameters.add(depth)}
      )
      SELECT ${responseColumns.replace(/(\w+)/g, 'r.$1')} FROM chain c JOIN responses r ON r.id = c.id ORDER BY c.depth`;
    const rows = await this.#executor.query<ResponseRow>(text, parameters.values);
    if (rows.length === 0) return [];
    const items = await this.#itemsOf(rows.map((row) => row.id));
    return rows.map((row) => responseFromRow(row, items.get(row.id)));
  }

  async findItems(itemIds: readonly string[], now: number): Promise<ItemMatch[]> {
    if (itemIds.length === 0) return [];
    const parameters = new SqlParameters(this.#executor);
    const list = itemIds.map((itemId) => parameters.add(itemId)).join(', ');
    const text = `SELECT i.response_id, i.kind, i.item_json, r.user_path, r.created_at
      FROM response_items i JOIN responses r ON r.id = i.response_id
      WHERE i.item_id IN (${list}) AND r.expires_at > ${parameters.add(now)}`;
    const rows = await this.#executor.query<MatchRow>(text, parameters.values);
    return rows.map((row) => ({
      item: JSON.parse(row.item_json) as ResponseItem,
      kind: row.kind === 'output' ? 'output' : 'input',
      responseId: row.response_id,
      userPath: row.user_path,
      createdAt: toNumber(row.created_at),
    }));
  }

  async delete(id: string): Promise<boolean> {
    const placeholder = this.#executor.placeholder(1);
    // The response row first: its items are invisible from then on, whatever happens next.
    const deleted = await this.#executor.execute(`DELETE FROM responses WHERE id = ${placeholder}`, [id]);
    await this.#executor.execute(`DELETE FROM response_items WHERE response_id = ${placeholder}`, [id]);
    return deleted > 0;
  }

  async insertPointer(pointer: ResponsePointer): Promise<void> {
    const parameters = new SqlParameters(this.#executor);
    const values = [pointer.id, pointer.instance, pointer.userPath, pointer.createdAt, pointer.expiresAt]
      .map((value) => parameters.add(value))
      .join(', ');
    await this.#executor.execute(
      `INSERT INTO response_pointers (id, instance, user_path, created_at, expires_at) VALUES (${values})
        ON CONFLICT (id) DO UPDATE SET instance = excluded.instance, user_path = excluded.user_path,
          created_at = excluded.created_at, expires_at = excluded.expires_at`,
      parameters.values,
    );
  }

  async pointer(id: string, now: number): Promise<ResponsePointer | null> {
    const [first, second] = [this.#executor.placeholder(1), this.#executor.placeholder(2)];
    const rows = await this.#executor.query<PointerRow>(
      `SELECT id, instance, user_path, created_at, expires_at FROM response_pointers WHERE id = ${first} AND expires_at > ${second}`,
      [id, now],
    );
    const row = rows[0];
    if (row === undefined) return null;
    return {
      id: row.id,
      instance: row.instance,
      userPath: row.user_path,
      createdAt: toNumber(row.created_at),
      expiresAt: toNumber(row.expires_at),
    };
  }

  async deletePointer(id: string): Promise<void> {
    await this.#executor.execute(`DELETE FROM response_pointers WHERE id = ${this.#executor.placeholder(1)}`, [id]);
  }

  async deleteExpired(now: number, limit: number): Promise<number> {
    const [at, most] = [this.#executor.placeholder(1), this.#executor.placeholder(2)];
    const responses = await this.#executor.execute(
      `DELETE FROM responses WHERE id IN (SELECT id FROM responses WHERE expires_at <= ${at} LIMIT ${most})`,
      [now, limit],
    );
    const items = await this.#executor.execute(
      `DELETE FROM response_items WHERE (response_id, kind, seq) IN
        (SELECT response_id, kind, seq FROM response_items WHERE expires_at <= ${at} LIMIT ${most})`,
      [now, limit],
    );
    const pointers = await this.#executor.execute(
      `DELETE FROM response_pointers WHERE id IN (SELECT id FROM response_pointers WHERE expires_at <= ${at} LIMIT ${most})`,
      [now, limit],
    );
    return responses + items + pointers;
  }

  async #itemsOf(responseIds: readonly string[]): Promise<Map<string, { input: ResponseItem[]; output: ResponseItem[] }>> {
    const parameters = new SqlParameters(this.#executor);
    const list = responseIds.map((id) => parameters.add(id)).join(', ');
    const rows = await this.#executor.query<ItemRow>(
      `SELECT response_id, kind, item_json FROM response_items WHERE response_id IN (${list}) ORDER BY response_id, kind, seq`,
      parameters.values,
    );
    const items = new Map<string, { input: ResponseItem[]; output: ResponseItem[] }>();
    for (const row of rows) {
      let entry = items.get(row.response_id);
      if (entry === undefined) items.set(row.response_id, (entry = { input: [], output: [] }));
      (row.kind === 'output' ? entry.output : entry.input).push(JSON.parse(row.item_json) as ResponseItem);
    }
    return items;
  }
}

function itemRow(response: StoredResponse, kind: 'input' | 'output', index: number, item: ResponseItem): SqlValue[] {
  const itemId = typeof item['id'] === 'string' ? item['id'] : '';
  return [response.id, kind, index, itemId, JSON.stringify(item), response.expiresAt];
}

function responseFromRow(row: ResponseRow, items: { input: ResponseItem[]; output: ResponseItem[] } | undefined): StoredResponse {
  return {
    id: row.id,
    userPath: row.user_path,
    previousResponseId: row.previous_response_id,
    provider: row.provider,
    model: row.model,
    response: JSON.parse(row.response_json) as Record<string, unknown>,
    input: items?.input ?? [],
    output: items?.output ?? [],
    createdAt: toNumber(row.created_at),
    expiresAt: toNumber(row.expires_at),
  };
}
