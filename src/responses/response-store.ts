/** A Responses API item (message, function_call, function_call_output, reasoning, ...) as JSON. */
export type ResponseItem = Record<string, unknown>;

/** A response the gateway created through the chat translation, kept for later requests. */
export interface StoredResponse {
  /** `resp_...` */
  readonly id: string;
  /** The user path of the request that created it; readers must cover it (scoping). */
  readonly userPath: string;
  readonly previousResponseId: string | null;
  readonly provider: string;
  readonly model: string;
  /** The Response object as returned, without `output` (kept as items). */
  readonly response: Record<string, unknown>;
  /** The request's own input items, references resolved, each with an `id`. */
  readonly input: readonly ResponseItem[];
  readonly output: readonly ResponseItem[];
  /** Epoch ms. */
  readonly createdAt: number;
  /** Epoch ms; from then on the response is gone for every reader, swept or not. */
  readonly expiresAt: number;
}

/** One stored item found by its id. */
export interface ItemMatch {
  readonly item: ResponseItem;
  readonly kind: 'input' | 'output';
  readonly responseId: string;
  readonly userPath: string;
  readonly createdAt: number;
}

/** A response a native instance (OpenAI's Responses API) created and holds itself. */
export interface ResponsePointer {
  readonly id: string;
  /** The instance name. */
  readonly instance: string;
  readonly userPath: string;
  readonly createdAt: number;
  readonly expiresAt: number;
}

/**
 * Durable Responses API state. Implementations: SQLite and PostgreSQL (src/storage/sql/).
 * Every read takes `now` (epoch ms) and ignores what expired by then.
 */
export interface ResponseStore {
  /** Stores the response and its items; visible to every reader once it resolves. */
  insert(response: StoredResponse): Promise<void>;
  /**
   * The response `id` followed by its ancestors through `previousResponseId`, newest first,
   * at most `depth` of them; the chain ends at a missing or expired link. Empty when `id`
   * itself is unknown or expired.
   */
  chain(id: string, now: number, depth: number): Promise<StoredResponse[]>;
  /** Every live stored item whose id is one of `itemIds`, in no particular order. */
  findItems(itemIds: readonly string[], now: number): Promise<ItemMatch[]>;
  /** Removes the response and its items; false when there was no such response. */
  delete(id: string): Promise<boolean>;
  /** Records which instance holds a native response; a second pointer for the same id replaces the first. */
  insertPointer(pointer: ResponsePointer): Promise<void>;
  /** The live pointer for `id`, or null. */
  pointer(id: string, now: number): Promise<ResponsePointer | null>;
  deletePointer(id: string): Promise<void>;
  /** Removes up to `limit` expired rows of each table (responses, items, pointers); the number of rows removed. */
  deleteExpired(now: number, limit: number): Promise<number>;
}
