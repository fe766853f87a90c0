/** What a tenant creates upstream and the gateway records an owner for. */
export type OwnedKind =
  | 'file'
  | 'batch'
  | 'upload'
  | 'response'
  | 'response_item'
  // The resources of the /v1 catalogue (gateway/relay/openai-resources.ts).
  | 'assistant'
  | 'thread'
  | 'vector_store'
  | 'conversation'
  | 'chat_completion'
  | 'fine_tuning_job'
  | 'eval'
  | 'container'
  | 'video'
  | 'skill'
  | 'realtime_call'
  | 'model'
  | 'video_character'
  | 'chatkit_session'
  | 'chatkit_thread'
  // A thread's run and an eval's run: recorded (with the parent's owner) when their usage is charged, so it is charged once.
  | 'run'
  | 'eval_run'
  // Anthropic's and Gemini's (gateway/relay/anthropic-resources.ts, gemini-resources.ts).
  | 'message_batch'
  | 'cached_content';

/** One resource created upstream through the gateway, with who created it. */
export interface OwnedResource {
  readonly kind: OwnedKind;
  /** The upstream's id (`file-...`, `batch_...`, `resp_...`). */
  readonly id: string;
  /** The provider instance that holds it: ids are the upstream's, so they are unique per instance only. */
  readonly instance: string;
  /** The user path of the request that created it; the owner's path and its ancestors see it. */
  readonly userPath: string;
  /** The managed key that created it, `jwt:<sub>` for a JWT, null for the master key or open mode. */
  readonly keyId: string | null;
  /** Epoch ms. */
  readonly createdAt: number;
  /** A batch, run, eval run, fine-tuning job or video whose cost was charged to its owner (so that it is charged once). */
  readonly charged: boolean;
}

/** A page of the caller's resources, newest first. */
export interface OwnedPageQuery {
  readonly kind: OwnedKind;
  readonly instance: string;
  /** Only resources owned by this path or its descendants (case-insensitive); null: everyone's. */
  readonly visibleTo: string | null;
  /** Continue after this resource (exclusive); an id the query does not see gives an empty page. */
  readonly after?: string | undefined;
  readonly limit: number;
}

/**
 * Owners of upstream resources. Implementations: SQLite and PostgreSQL (src/storage/sql/),
 * checked by one conformance suite. The first owner recorded for an id keeps it.
 */
export interface OwnershipStore {
  /** Records a resource; a second record of the same (kind, instance, id) changes nothing. */
  record(resource: OwnedResource): Promise<void>;
  /** Records several at once (a response's output items); same rule. */
  recordMany(resources: readonly OwnedResource[]): Promise<void>;
  find(kind: OwnedKind, instance: string, id: string): Promise<OwnedResource | null>;
  /** Several ids of one kind and instance, in no particular order; unknown ids are left out. */
  findMany(kind: OwnedKind, instance: string, ids: readonly string[]): Promise<OwnedResource[]>;
  /** Newest first (created_at, then id, descending), at most `limit`. */
  list(query: OwnedPageQuery): Promise<OwnedResource[]>;
  /** Marks a resource charged; true only for the one call that changed it (false when already charged or unknown). */
  markCharged(kind: OwnedKind, instance: string, id: string): Promise<boolean>;
  /** Forgets a resource; false when there was none. */
  delete(kind: OwnedKind, instance: string, id: string): Promise<boolean>;
}
