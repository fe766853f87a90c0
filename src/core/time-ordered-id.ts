import { randomFillSync } from 'node:crypto';

// Random bytes are drawn in blocks (as `randomUUID` does) rather than per id.
const idsPerBlock = 128;
const entropy = Buffer.allocUnsafe(16 * idsPerBlock);
let nextByte = entropy.length;
// Many ids share a millisecond: its formatted timestamp is kept.
let prefixMillis = -1;
let prefix = '';
const hexOf = Array.from({ length: 256 }, (_unused, byte) => byte.toString(16).padStart(2, '0'));

/**
 * A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then 74 random bits. Ids made one after
 * the other sort together, so indexes keyed on them (usage records, request ids) grow at their
 * end instead of touching a random page for every insert.
 */
export function timeOrderedUuid(now: number = Date.now()): string {
  if (nextByte === entropy.length) {
    randomFillSync(entropy);
    nextByte = 0;
  }
  const at = nextByte;
  nextByte += 16;
  const millis = Math.max(0, Math.floor(now));
  if (millis !== prefixMillis) {
    const time = millis.toString(16).padStart(12, '0').slice(-12);
    prefix = `${time.slice(0, 8)}-${time.slice(8)}-7`;
    prefixMillis = millis;
  }
  const byte = (index: number): string => hexOf[entropy[at + index] ?? 0] ?? '00';
  const variant = hexOf[((entropy[at + 2] ?? 0) & 0x3f) | 0x80] ?? '80';
  const version = hexOf[(entropy[at] ?? 0) & 0x0f] ?? '00';
  return `${prefix}${version[1] ?? '0'}${byte(1)}-${variant}${byte(3)}-${byte(4)}${byte(5)}${byte(6)}${byte(7)}${byte(8)}${byte(9)}`;
}
