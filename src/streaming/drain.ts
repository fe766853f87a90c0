import type { ServerResponse } from 'node:http';

/** Resolves when the client's socket drains or closes, whichever comes first (backpressure). */
export function waitForDrain(response: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}
