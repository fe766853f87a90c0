import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { LoggingLevel, ResourceUpdatedNotification } from '@modelcontextprotocol/sdk/types.js';
import type { UpstreamChannel } from './upstream-sessions.ts';

/** What a shared channel needs of its connection: calls on the shared client, and its subscriptions. */
export interface SharedConnection {
  use<Result>(operation: (client: Client) => Promise<Result>): Promise<Result>;
  readonly subscriptions: SharedSubscriptions;
}

type UpdateListener = (notification: ResourceUpdatedNotification) => void;

/**
 * Resource subscriptions of the sessions sharing one upstream client (stdio servers, ADR 0033),
 * counted per URI: the upstream is subscribed when the first session subscribes and unsubscribed
 * when the last one leaves, and each `notifications/resources/updated` goes to the sessions
 * subscribed to its URI only.
 */
export class SharedSubscriptions {
  private readonly byUri = new Map<string, Set<UpdateListener>>();

  async add(connection: SharedConnection, uri: string, listener: UpdateListener): Promise<void> {
    const listeners = this.byUri.get(uri);
    if (listeners !== undefined) return void listeners.add(listener);
    this.byUri.set(uri, new Set([listener]));
    try {
      await connection.use((client) => client.subscribeResource({ uri }));
    } catch (error) {
      this.byUri.delete(uri);
      throw error;
    }
  }

  async remove(connection: SharedConnection, uri: string, listener: UpdateListener): Promise<void> {
    const listeners = this.byUri.get(uri);
    if (listeners === undefined || !listeners.delete(listener) || listeners.size > 0) return;
    this.byUri.delete(uri);
    await connection.use((client) => client.unsubscribeResource({ uri }));
  }

  updated(notification: ResourceUpdatedNotification): void {
    for (const listener of this.byUri.get(notification.params.uri) ?? []) listener(notification);
  }

  /** Subscribes a new client (after a reconnect) to every URI some session holds. */
  async restore(client: Client, timeoutMs: number): Promise<void> {
    for (const uri of this.byUri.keys()) await client.subscribeResource({ uri }, { timeout: timeoutMs }).catch(() => undefined);
  }
}

/**
 * A downstream session's way to a stdio server: the one shared client (a process per session would
 * split a stateful server's state and multiply processes). Calls, progress, `_meta` and completions
 * work as on a session of its own; the shared client declares no client capabilities, so the server
 * never asks for sampling, elicitation or roots, and its log level is not set per session (its log
 * messages could belong to any session: they are not relayed). Subscriptions are counted per URI.
 */
export class SharedChannel implements UpstreamChannel {
  private readonly connection: SharedConnection;
  private readonly listener: UpdateListener;
  private readonly uris = new Set<string>();

  constructor(connection: SharedConnection, notify: UpdateListener) {
    this.connection = connection;
    this.listener = notify;
  }

  use<Result>(operation: (client: Client) => Promise<Result>): Promise<Result> {
    return this.connection.use(operation);
  }

  keepLevel(_level: LoggingLevel): void {}

  async setLevel(_level: LoggingLevel): Promise<void> {}

  async subscribe(uri: string): Promise<void> {
    if (this.uris.has(uri)) return;
    await this.connection.subscriptions.add(this.connection, uri, this.listener);
    this.uris.add(uri);
  }

  async unsubscribe(uri: string): Promise<void> {
    if (!this.uris.delete(uri)) return;
    await this.connection.subscriptions.remove(this.connection, uri, this.listener);
  }

  async rootsChanged(): Promise<void> {}

  async close(): Promise<void> {
    const uris = [...this.uris];
    this.uris.clear();
    await Promise.all(uris.map((uri) => this.connection.subscriptions.remove(this.connection, uri, this.listener).catch(() => undefined)));
  }
}
