import { randomUUID } from 'node:crypto';

// Many ids share a millisecond: its formatted timestamp is kept.
let prefixMillis = -1;
let prefix = '';
let sequence = 0;

/**
 * A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then 74 random bits. Ids made one after
 * the other sort together, so indexes keyed on them (usage records, request ids) grow at their
 * end instead of touching a random page for every insert. The random part is a v4 UUID's
 * (`randomUUID` draws its entropy in blocks), after its version digit and 12 bits of a counter
 * within the millisecond (RFC 9562 method 1): ids of one process sort in the order they were
 * made even within a millisecond (the admin audit trail lists by id), up to 4096 a millisecond.
 */
export function timeOrderedUuid(now: number = Date.now()): string {
  const millis = Math.max(0, Math.floor(now));
  if (millis !== prefixMillis) {
    const time = millis.toString(16).padStart(12, '0').slice(-12);
    prefix = `${time.slice(0, 8)}-${time.slice(8)}-7`;
    prefixMillis = millis;
    sequence = 0;
  } else if (sequence < 0xfff) sequence += 1;
  return prefix + sequence.toString(16).padStart(3, '0') + randomUUID().slice(18);
}
