import { createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { relayResponse } from '../gateway/relay/relay-response.ts';
import { ClientAbort } from './client-abort.ts';

/**
 * relayEventStream (image streams) and relayToClient report usage after relayResponse resolves,
 * i.e. after the response's 'finish'; the admission's release runs at `end()` and withReservation
 * gives the budget hold back one setImmediate later (execute-plan.ts). With a client that reads
 * slowly, 'finish' comes turns later: the hold is gone before the charge is made.
 */
describe('budget hold and charge around relayResponse', () => {
  it('charges before the hold is given back, even for a slow client', async () => {
    const order: string[] = [];
    const server = createServer((_request, response) => {
      const abort = new ClientAbort(response);
      // withReservation's release: slots at once, the hold a turn later.
      abort.whenClosed(() => setImmediate(() => order.push('hold released')));
      const body = Readable.from([Buffer.alloc(8 * 1024 * 1024, 97)]);
      void relayResponse(response, { status: 200, headers: { 'content-type': 'text/event-stream' }, body }, abort.signal).then(() =>
        order.push('charged'),
      );
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      await new Promise<void>((resolve, reject) => {
        get(`http://127.0.0.1:${port}/`, { agent: false }, (response) => {
          response.pause();
          setTimeout(() => {
            response.resume();
            response.on('end', resolve);
          }, 200);
        }).on('error', reject);
      });
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(order).toEqual(['charged', 'hold released']);
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
