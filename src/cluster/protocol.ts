// The messages between the cluster primary and its HTTP workers (node:cluster IPC, JSON).
// Workers batch their calls: every call made in one turn of the event loop travels in one
// message, and the primary answers a batch with one message too.

/** Marks the gateway's own messages (cluster sends its internal ones on the same channel). */
export const channelTag = 'model-gateway';

/**
 * One operation asked of the primary: a positive `id` asks for an answer, a negative one (a
 * post) for an answer only if it fails, 0 for none.
 */
export interface Call {
  readonly id: number;
  readonly op: string;
  readonly args: unknown;
}

export interface Reply {
  readonly id: number;
  readonly ok: boolean;
  /** The result, or the error message when `ok` is false. */
  readonly value: unknown;
}

/** Worker -> primary. */
export interface CallBatch {
  readonly tag: typeof channelTag;
  readonly calls: readonly Call[];
}

/** Primary -> worker: answers, or an event (reload, MCP ports). */
export interface PrimaryMessage {
  readonly tag: typeof channelTag;
  readonly replies?: readonly Reply[];
  readonly event?: string;
  readonly data?: unknown;
}

export function isGatewayMessage(message: unknown): message is { tag: typeof channelTag } {
  return typeof message === 'object' && message !== null && (message as { tag?: unknown }).tag === channelTag;
}
