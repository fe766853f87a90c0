import { randomFillSync } from 'node:crypto';

// Many ids share a millisecond: its formatted timestamp is kept.
let prefixMillis = -1;
let prefix = '';
let sequence = 0;

/** Two hex digits per byte value, and three per 12-bit sequence number: formatting is lookups. */
const hexByte = Array.from({ length: 256 }, (_unused, value) => value.toString(16).padStart(2, '0'));
const hexSequence = Array.from({ length: 4096 }, (_unused, value) => value.toString(16).padStart(3, '0'));

/** Random bytes drawn in blocks (8 per id): one `randomFillSync` per 512 ids. */
const randomBlock = Buffer.alloc(8 * 512);
let randomAt = randomBlock.length;

/**
 * A UUIDv7 (RFC 9562): 48 bits of Unix milliseconds, then 74 random bits. Ids made one after
 * the other sort together, so indexes keyed on them (usage records, request ids) grow at their
 * end instead of touching a random page for every insert. After the version digit come 12
 * bits of a counter within the millisecond (RFC 9562 method 1): ids of one process sort in
 * the order they were made even within a millisecond (the admin audit trail lists by id), up
 * to 4096 a millisecond; then the variant and 62 random bits from a block of CSPRNG bytes.
 */
export function timeOrderedUuid(now: number = Date.now()): string {
  const millis = Math.max(0, Math.floor(now));
  if (millis !== prefixMillis) {
    const time = millis.toString(16).padStart(12, '0').slice(-12);
    prefix = `${time.slice(0, 8)}-${time.slice(8)}-7`;
    prefixMillis = millis;
    sequence = 0;
  } else if (sequence < 0xfff) sequence += 1;
  if (randomAt === randomBlock.length) {
    randomFillSync(randomBlock);
    randomAt = 0;
  }
  const at = randomAt;
  randomAt += 8;
  // The first random byte carries the RFC 9562 variant (0b10) in its top bits.
  const variant = hexByte[((randomBlock[at] as number) & 0x3f) | 0x80] as string;
  return `${prefix}${hexSequence[sequence] as string}-${variant}${hexAt(at + 1)}-${hexAt(at + 2)}${hexAt(at + 3)}${hexAt(at + 4)}${hexAt(at + 5)}${hexAt(at + 6)}${hexAt(at + 7)}`;
}

/** The two hex digits of the random block's byte at `index` (no closure per id). */
function hexAt(index: number): string {
  return hexByte[randomBlock[index] as number] as string;
}
