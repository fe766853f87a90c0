import { timeOrderedUuid } from '../core/time-ordered-id.ts';
import type { IncomingMessage } from 'node:http';

const acceptable = /^[A-Za-z0-9._:@=+/-]{1,128}$/;

/** Honours a sane inbound `X-Request-ID`; otherwise a new time-ordered UUID (the usage index on request ids then grows at its end). */
export function requestIdFor(request: IncomingMessage): string {
  const inbound = request.headers['x-request-id'];
  const value = Array.isArray(inbound) ? inbound[0] : inbound;
  return value !== undefined && acceptable.test(value) ? value : timeOrderedUuid();
}
