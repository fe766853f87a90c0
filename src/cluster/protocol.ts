// The few messages between the cluster primary and its HTTP workers (node:cluster IPC, JSON).
// No state travels here: the workers share state through the stores, as replicas do.

/** Marks the gateway's own messages (cluster sends its internal ones on the same channel). */
export const channelTag = 'model-gateway';

/** Worker -> primary. */
export type WorkerMessage =
  /** The worker serves; its private loopback port takes MCP requests relayed by the others. */
  | { readonly type: 'listening'; readonly mcpPort: number }
  /** An admin write succeeded here (its route): the other workers re-read at once. */
  | { readonly type: 'changed'; readonly route: string }
  /** A scrape of /metrics: the instance's metrics, answered by `metrics.gathered` with this id. */
  | { readonly type: 'metrics.gather'; readonly id: number }
  /** This worker's metrics for the collection `token` (null: they could not be read). */
  | { readonly type: 'metrics.part'; readonly token: number; readonly metrics: object[] | null };

/** Primary -> worker. */
export type PrimaryMessage =
  /** Worker id -> private MCP port, of every worker that serves. */
  | { readonly type: 'mcp.ports'; readonly ports: ReadonlyArray<readonly [number, number]> }
  | { readonly type: 'changed'; readonly route: string }
  | { readonly type: 'metrics.collect'; readonly token: number }
  /** The aggregate exposition text; null when it could not be made. */
  | { readonly type: 'metrics.gathered'; readonly id: number; readonly text: string | null };

export type Tagged<M> = M & { readonly tag: typeof channelTag };

/** Handlers by message type, each typed by its own message. */
export type Handlers<M extends { type: string }, Context extends unknown[] = []> = {
  [K in M['type']]?: (...args: [...Context, Extract<M, { type: K }>]) => void | Promise<void>;
};

/**
 * The gateway's messages on a channel both ends of which are this program: the tag tells them
 * from node:cluster's own, the type picks the handler.
 */
export function isGatewayMessage<M extends { type: string }>(message: unknown): message is Tagged<M> {
  return typeof message === 'object' && message !== null && (message as { tag?: unknown }).tag === channelTag;
}

export function tagged<M>(message: M): Tagged<M> {
  return { ...message, tag: channelTag };
}

/** Runs the handler of the message's type, if any. */
export function dispatch<M extends { type: string }, Context extends unknown[]>(
  handlers: Handlers<M, Context>,
  message: M,
  ...context: Context
): void {
  const handler = handlers[message.type as M['type']] as ((...args: [...Context, M]) => void | Promise<void>) | undefined;
  // A handler reports its own failures; one that slips through must not end the process.
  void Promise.resolve(handler?.(...context, message)).catch(() => undefined);
}
