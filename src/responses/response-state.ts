import type { Logger } from 'pino';
import { userPathCovers } from '../core/user-path.ts';
import { notFound } from '../errors/gateway-error.ts';
import { normalizeInput, referencedIds, resolveReferences } from './input-items.ts';
import { pageOf, type InputItemsPage, type PageQuery } from './input-items-page.ts';
import type { ItemMatch, ResponseItem, ResponseStore, StoredResponse } from './response-store.ts';

/** How far `previous_response_id` is followed back (a bound, not a policy). */
const maximumChain = 1000;
/** Expired rows removed per statement by the sweep, and statements per sweep at most. */
const sweepBatch = 500;
const sweepBatchesPerRun = 200;

export interface ResponseStateOptions {
  store: ResponseStore;
  retentionMs: number;
  sweepIntervalMs: number;
  logger: Logger;
  now?: () => number;
}

/** What a request through the chat translation works with once its state is resolved. */
export interface PreparedInput {
  /** What the chat upstream sees: the earlier responses' input and output, then this request's input. */
  context: ResponseItem[];
  /** This request's own input, references resolved, ids assigned (what is stored). */
  own: ResponseItem[];
  previousResponseId: string | null;
}

/** A finished response to keep. */
export interface ResponseToSave {
  response: Record<string, unknown>;
  own: readonly ResponseItem[];
  previousResponseId: string | null;
  userPath: string;
  provider: string;
  model: string;
}

/**
 * Responses API state for the responses the gateway creates through the chat translation:
 * resolves `previous_response_id` and `item_reference` input items, keeps finished
 * responses for `retentionMs`, serves them to `GET`/`DELETE /v1/responses/{id}`, and sweeps
 * expired ones in bounded batches. A response is visible to callers whose user path covers
 * the path it was created under (that path and its ancestors); to others it does not exist.
 */
export class ResponseState {
  readonly #options: ResponseStateOptions;
  readonly #now: () => number;
  #timer: NodeJS.Timeout | null = null;
  #sweeping: Promise<void> | null = null;

  constructor(options: ResponseStateOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** Whether a request names stored state (so `prepare` has work to do). */
  static references(body: Record<string, unknown>): boolean {
    const previous = body['previous_response_id'];
    const input = body['input'];
    return (
      (previous !== undefined && previous !== null) ||
      (Array.isArray(input) && input.some((item) => (item as { type?: unknown } | null)?.type === 'item_reference'))
    );
  }

  async prepare(body: Record<string, unknown>, userPath: string): Promise<PreparedInput> {
    const previous = body['previous_response_id'];
    const previousResponseId = typeof previous === 'string' && previous !== '' ? previous : null;
    const items = normalizeInput(body['input']);
    const ids = referencedIds(items);
    const now = this.#now();
    const [chain, matches] = await Promise.all([
      previousResponseId === null ? [] : this.#options.store.chain(previousResponseId, now, maximumChain),
      this.#options.store.findItems(ids, now),
    ]);
    if (previousResponseId !== null && !this.#visible(chain[0], userPath)) {
      throw notFound(`Previous response with id '${previousResponseId}' not found.`, {
        code: 'response_not_found',
        param: 'previous_response_id',
      });
    }
    const own = resolveReferences(items, visibleItems(matches, userPath));
    const history = chain.reverse().flatMap((response) => [...response.input, ...response.output]);
    return { context: [...history, ...own], own, previousResponseId };
  }

  async save(finished: ResponseToSave): Promise<void> {
    const { output, ...response } = finished.response;
    const id = String(response['id']);
    const createdAt = this.#now();
    const stored: StoredResponse = {
      id,
      userPath: finished.userPath,
      previousResponseId: finished.previousResponseId,
      provider: finished.provider,
      model: finished.model,
      response,
      input: finished.own,
      output: Array.isArray(output) ? (output as ResponseItem[]) : [],
      createdAt,
      expiresAt: createdAt + this.#options.retentionMs,
    };
    try {
      await this.#options.store.insert(stored);
    } catch (error) {
      this.#options.logger.warn({ err: error, response_id: id }, 'storing a response failed: later requests cannot refer to it');
    }
  }

  /** Remembers that native `instance` holds response `id` (created for `userPath`). */
  async point(id: string, instance: string, userPath: string): Promise<void> {
    const createdAt = this.#now();
    const pointer = { id, instance, userPath, createdAt, expiresAt: createdAt + this.#options.retentionMs };
    try {
      await this.#options.store.insertPointer(pointer);
    } catch (error) {
      this.#options.logger.warn({ err: error, response_id: id }, 'storing a response pointer failed');
    }
  }

  /** The native instance holding `id` when the gateway did not store it itself and the caller may see it; else null. */
  async nativeInstance(id: string, userPath: string): Promise<string | null> {
    const [stored] = await this.#options.store.chain(id, this.#now(), 1);
    if (stored !== undefined) return null;
    const pointer = await this.#options.store.pointer(id, this.#now());
    return pointer !== null && userPathCovers(userPath, pointer.userPath) ? pointer.instance : null;
  }

  /** Whether the gateway itself holds response `id` and `userPath` may see it. */
  async holdsVisible(id: string, userPath: string): Promise<boolean> {
    const [stored] = await this.#options.store.chain(id, this.#now(), 1);
    return this.#visible(stored, userPath);
  }

  /** The ids among `itemIds` of items the gateway holds that `userPath` may see. */
  async visibleItemIds(itemIds: readonly string[], userPath: string): Promise<Set<string>> {
    return new Set(visibleItems(await this.#options.store.findItems(itemIds, this.#now()), userPath).keys());
  }

  async forget(id: string): Promise<void> {
    await this.#options.store.deletePointer(id);
  }

  async retrieve(id: string, userPath: string): Promise<Record<string, unknown>> {
    const stored = await this.#find(id, userPath);
    return { ...stored.response, output: stored.output };
  }

  async inputItems(id: string, userPath: string, query: PageQuery): Promise<InputItemsPage> {
    return pageOf((await this.#find(id, userPath)).input, query);
  }

  async remove(id: string, userPath: string): Promise<Record<string, unknown>> {
    await this.#find(id, userPath);
    await this.#options.store.delete(id);
    return { id, object: 'response', deleted: true };
  }

  /** Sweeps now and then every `sweepIntervalMs`. */
  start(): void {
    this.#sweepSoon();
    this.#timer = setInterval(() => this.#sweepSoon(), this.#options.sweepIntervalMs);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    await this.#sweeping;
  }

  /** Removes expired rows, `sweepBatch` per statement, until none is left (or the run's bound). */
  async sweep(): Promise<number> {
    let removed = 0;
    for (let batch = 0; batch < sweepBatchesPerRun; batch += 1) {
      const count = await this.#options.store.deleteExpired(this.#now(), sweepBatch);
      removed += count;
      if (count === 0) break;
      await new Promise((resolve) => setImmediate(resolve));
    }
    return removed;
  }

  #sweepSoon(): void {
    if (this.#sweeping !== null) return;
    this.#sweeping = this.sweep()
      .then((removed) => {
        if (removed > 0) this.#options.logger.info({ removed }, 'expired responses swept');
      })
      .catch((error: unknown) => this.#options.logger.warn({ err: error }, 'sweeping expired responses failed'))
      .finally(() => {
        this.#sweeping = null;
      });
  }

  async #find(id: string, userPath: string): Promise<StoredResponse> {
    const [stored] = await this.#options.store.chain(id, this.#now(), 1);
    if (stored === undefined || !this.#visible(stored, userPath)) {
      throw notFound(`Response with id '${id}' not found.`, { code: 'response_not_found' });
    }
    return stored;
  }

  #visible(stored: StoredResponse | undefined, userPath: string): stored is StoredResponse {
    return stored !== undefined && userPathCovers(userPath, stored.userPath);
  }
}

/** The caller's view of the matches: items it may read, output before input, newest first. */
function visibleItems(matches: readonly ItemMatch[], userPath: string): Map<string, ResponseItem> {
  const ranked = matches
    .filter((match) => userPathCovers(userPath, match.userPath))
    .sort((a, b) => (a.kind === b.kind ? b.createdAt - a.createdAt : a.kind === 'output' ? -1 : 1));
  const found = new Map<string, ResponseItem>();
  for (const match of ranked) {
    const id = String(match.item['id']);
    if (!found.has(id)) found.set(id, match.item);
  }
  return found;
}
