import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ResourceUpdatedNotification } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { SharedChannel, SharedSubscriptions, type SharedConnection } from './shared-channel.ts';

/** A shared connection whose client records the subscription requests it is sent. */
function fakeConnection(): { connection: SharedConnection; sent: string[] } {
  const sent: string[] = [];
  const client = {
    subscribeResource: ({ uri }: { uri: string }) => Promise.resolve(void sent.push(`subscribe ${uri}`)),
    unsubscribeResource: ({ uri }: { uri: string }) => Promise.resolve(void sent.push(`unsubscribe ${uri}`)),
  } as unknown as Client;
  const connection: SharedConnection = { use: (operation) => operation(client), subscriptions: new SharedSubscriptions() };
  return { connection, sent };
}

const update = (uri: string): ResourceUpdatedNotification => ({ method: 'notifications/resources/updated', params: { uri } });

describe('SharedChannel (stdio servers)', () => {
  it('counts subscriptions per URI across sessions and routes updates to the subscribed sessions only', async () => {
    const { connection, sent } = fakeConnection();
    const seen: string[] = [];
    const first = new SharedChannel(connection, (notification) => void seen.push(`first ${notification.params.uri}`));
    const second = new SharedChannel(connection, (notification) => void seen.push(`second ${notification.params.uri}`));
    await first.subscribe('file:///a');
    await first.subscribe('file:///a');
    await second.subscribe('file:///a');
    await second.subscribe('file:///b');
    expect(sent).toEqual(['subscribe file:///a', 'subscribe file:///b']);
    connection.subscriptions.updated(update('file:///a'));
    connection.subscriptions.updated(update('file:///b'));
    expect(seen).toEqual(['first file:///a', 'second file:///a', 'second file:///b']);
    await first.unsubscribe('file:///a');
    expect(sent).toHaveLength(2);
    await second.close();
    expect(sent).toEqual(['subscribe file:///a', 'subscribe file:///b', 'unsubscribe file:///a', 'unsubscribe file:///b']);
    connection.subscriptions.updated(update('file:///a'));
    expect(seen).toHaveLength(3);
  });
});
