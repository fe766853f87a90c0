import { setTimeout as sleep } from 'node:timers/promises';

// Polling: what the gateway writes in the background (batch writers, reloads, other workers)
// shows up a moment later.

/** Polls until `probe` returns a value (not undefined); fails after `timeoutMs`. */
export async function eventually<Value>(probe: () => Promise<Value | undefined>, what: string, timeoutMs = 10_000): Promise<Value> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() >= deadline) throw new Error(`not within ${timeoutMs} ms: ${what}`);
    await sleep(20);
  }
}

/** Reads until `done` holds for what was read; fails after `timeoutMs` with the last value. */
export async function waitFor<Value>(
  read: () => Value | Promise<Value>,
  done: (value: Value) => boolean,
  timeoutMs = 15_000,
): Promise<Value> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`condition not met in time: ${JSON.stringify(value)}`);
    await sleep(50);
  }
}
