import type { ServerResponse } from 'node:http';
import { streamRetryMs, type SessionEventStores } from './event-store.ts';
import { sameBinding, type SessionBinding } from './mcp-sessions.ts';

/** Whether the shared (Redis) store knows a session of another replica under the same binding. */
export async function heldElsewhere(events: SessionEventStores, sessionId: string, binding: SessionBinding): Promise<boolean> {
  if (events.kind !== 'redis') return false;
  const owner = await events.sessionBinding(sessionId);
  return owner !== null && sameBinding(owner, binding);
}

/**
 * A client resuming (`GET` with `Last-Event-ID`) a session another replica holds, through a replica
 * that does not hold it (`heldElsewhere`): the events it missed are replayed from the shared store,
 * then the stream ends with a `retry` hint so that the client polls again for what the owning
 * replica writes later (SEP-1699 polling).
 */
export async function replayForeignSession(
  events: SessionEventStores,
  sessionId: string,
  lastEventId: string,
  response: ServerResponse,
): Promise<void> {
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache, no-transform',
    'mcp-session-id': sessionId,
    'x-accel-buffering': 'no',
  });
  await events.replay(sessionId, lastEventId, (eventId, message) => {
    response.write(`event: message\nid: ${eventId}\ndata: ${JSON.stringify(message)}\n\n`);
    return Promise.resolve();
  });
  response.end(`retry: ${streamRetryMs}\n\n`);
}
