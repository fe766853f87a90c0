import { Agent, fetch as undiciFetch } from 'undici';

import type { RawReply, RawRequestOptions } from './helpers.ts';

// WORKERS > 1: the cluster hands new connections to the workers in turn, so a request on a
// connection of its own may reach any worker; several in a row reach every one of them.

/** One exchange on a fresh connection. */
export async function onNewConnection(url: string, options: RawRequestOptions = {}): Promise<RawReply> {
  const agent = new Agent();
  try {
    const { body } = options;
    const response = await undiciFetch(url, {
      method: options.method ?? (body === undefined ? 'GET' : 'POST'),
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
      body: body === undefined ? undefined : JSON.stringify(body),
      dispatcher: agent,
    });
    return { status: response.status, headers: Object.fromEntries(response.headers), text: await response.text() };
  } finally {
    await agent.close();
  }
}

/** The same exchange on `count` new connections, one after the other (every worker answers some). */
export async function onEachConnection(url: string, options: RawRequestOptions = {}, count = 6): Promise<RawReply[]> {
  const replies: RawReply[] = [];
  for (let index = 0; index < count; index += 1) replies.push(await onNewConnection(url, options));
  return replies;
}

/**
 * How long a write made through one worker may take to show on the other in these suites. They
 * run with RELOAD_INTERVAL_SECONDS=60: what shows sooner came by the primary's nudge (at once in
 * practice), not by the replica re-read, whose interval is the documented bound (docs/scaling.md).
 */
export const nudgeBoundMs = 3_000;
export const slowReloadEnv = { RELOAD_INTERVAL_SECONDS: '60' } as const;

/** Repeats `probe` (each round on new connections, so both workers answer) until `accepted`, within `timeoutMs`. */
export async function onBothWorkers<T>(probe: () => Promise<T>, accepted: (value: T) => boolean, timeoutMs = nudgeBoundMs): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (accepted(value)) return value;
    if (Date.now() >= deadline) throw new Error(`not on both workers within ${timeoutMs} ms: ${JSON.stringify(value).slice(0, 500)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
