import type { Span } from './types.ts';

export const piiEntities = ['email', 'phone', 'card', 'iban', 'ip'] as const;
export type PiiEntity = (typeof piiEntities)[number];

/*
 * Every pattern has bounded quantifiers only and starts at a literal or a word boundary, so a
 * scan costs a bounded number of steps per position: linear in the text, whatever it holds.
 * Exported for the equivalence test of the windowed scan (pii.test.ts).
 */
export const piiPatterns: Readonly<Record<Exclude<PiiEntity, 'email'>, RegExp>> = {
  card: /(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d])/g,
  iban: /\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]){11,30}\b/g,
  phone: /(?<![\w+])(?:\+\d{1,3}[ .-]?)?(?:\(\d{1,4}\)[ .-]?)?\d{2,4}(?:[ .-]?\d{2,4}){2,4}(?![\w])/g,
  ip: /(?<![\w.:])(?:(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)|(?:[0-9A-Fa-f]{1,4}:){7}[0-9A-Fa-f]{1,4}|(?:[0-9A-Fa-f]{1,4}:){1,6}:(?:[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4}){0,5})?)(?![\w.:])/g,
};

/** The IPv4 half of `piiPatterns.ip`: the whole scan costs about 2.5x this one on ordinary prose. */
const ipv4 = /(?<![\w.:])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![\w.:])/g;

/** An IPv6 address holds `::` or seven colons: a text with neither can only match IPv4. */
function mayHoldIpv6(text: string): boolean {
  if (text.includes('::')) return true;
  let colons = 0;
  for (let at = text.indexOf(':'); at !== -1 && colons < 7; at = text.indexOf(':', at + 1)) colons++;
  return colons >= 7;
}

/*
 * Windows: every card, IBAN, phone and IPv4 match holds an ASCII digit, starts at most 2
 * characters before its first digit (`+`/`(` of a phone, the country letters of an IBAN), is
 * at most 64 characters long (an IBAN's spaced letters), and a pattern reads at most one
 * character either side of a match (look-behind, look-ahead, \b). So the patterns find the
 * same matches in `windowBefore` characters before a run of digits to `windowAfter` past it as
 * in the whole text, and in any union of such windows: prose between numbers is skipped
 * instead of scanned once per pattern. pii.test.ts checks this against whole-text scans.
 */
const windowBefore = 3;
const windowAfter = 72;
/** Windows closer than this are merged: scanning the gap costs less than one more regex call per pattern. */
const mergeGap = 128;
/**
 * A run: digits with at most 31 other characters between them (a longer gap costs
 * backtracking), at most 64 of them (a bounded cost per call).
 */
const digitRun = /\d(?:\D{0,31}\d){0,63}/y;
const digits = ['0', '1', '2', '3', '4', '5', '6', '7', '8', '9'];
/** Below this length a text is one window when it holds a digit: one regex test costs less than ten indexOf calls. */
const shortText = 256;
const anyDigit = /\d/;
/** Where each digit occurs next in the text being read (its length when nowhere); reused, scans are synchronous. */
const nextAt = new Int32Array(10);

/**
 * `[start, end)` of each window, flat and in order; empty when the text holds no digit. Runs
 * start at the nearest next digit, found by indexOf (vectorised, ~10x a regex scan of prose),
 * each digit's position kept until passed, so every digit is searched for once per text. When
 * the runs found skip too little prose to pay for themselves (digits all over the text), the
 * last window runs to the end of the text: a text costs at most a few runs more than a whole scan.
 */
function windowsOf(text: string): number[] {
  const length = text.length;
  if (length < shortText) return anyDigit.test(text) ? [0, length] : [];
  const windows: number[] = [];
  nextAt.fill(-1);
  let skipped = 0;
  for (let from = 0, runs = 1; ; runs++) {
    let start = length;
    for (let digit = 0; digit < 10; digit++) {
      let at = nextAt[digit] as number;
      if (at < from) {
        at = text.indexOf(digits[digit] as string, from);
        nextAt[digit] = at = at === -1 ? length : at;
      }
      if (at < start) start = at;
    }
    if (start === length) return windows;
    digitRun.lastIndex = start;
    digitRun.test(text);
    from = digitRun.lastIndex;
    const last = windows.length - 1;
    const gap = Math.max(0, start - windowBefore) - (last < 0 ? 0 : (windows[last] as number));
    const end = runs * mergeGap > skipped + 2 * mergeGap ? length : Math.min(length, from + windowAfter);
    if (last >= 0 && gap < mergeGap) windows[last] = end;
    else {
      windows.push(start - windowBefore < 0 ? 0 : start - windowBefore, end);
      skipped += gap;
    }
    if (end === length) return windows;
  }
}

type Patterned = Exclude<PiiEntity, 'email'>;

/**
 * The finder of a `pii` guardrail: the enabled entities' matches, in no particular order
 * (`scan` sorts them and keeps the earliest, then longest, of overlapping ones; equal spans
 * keep the order card, iban, ip, phone).
 */
export function piiFinder(entities: Iterable<PiiEntity>): (text: string) => Span[] {
  const enabled = new Set(entities);
  const emails = enabled.has('email');
  const ip = enabled.has('ip');
  const withIpv4 = (['card', 'iban', 'ip', 'phone'] as const).filter((entity) => enabled.has(entity));
  const withoutIp = withIpv4.filter((entity) => entity !== 'ip');
  return (text) => {
    const spans: Span[] = [];
    if (emails) findEmails(text, spans);
    // IPv6 needs no digit: the whole pattern scans the whole text, before the phones of the windows.
    const ipv6 = ip && mayHoldIpv6(text);
    if (ipv6) findAll(piiPatterns.ip, 'ip', text, 0, spans);
    const patterned = ipv6 ? withoutIp : withIpv4;
    if (patterned.length > 0) findInWindows(text, patterned, spans);
    return spans;
  };
}

/** Each window's text once, scanned by each pattern in turn. */
function findInWindows(text: string, entities: readonly Patterned[], spans: Span[]): void {
  const windows = windowsOf(text);
  for (let at = 0; at < windows.length; at += 2) {
    const start = windows[at] as number;
    const end = windows[at + 1] as number;
    const window = start === 0 && end === text.length ? text : text.slice(start, end);
    for (const entity of entities) findAll(entity === 'ip' ? ipv4 : piiPatterns[entity], entity, window, start, spans);
  }
}

/** Every valid match of `pattern` in `text`, pushed with `offset` added to its bounds. */
function findAll(pattern: RegExp, entity: Patterned, text: string, offset: number, spans: Span[]): void {
  pattern.lastIndex = 0;
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
    const end = pattern.lastIndex;
    if (valid(entity, text, match.index, end)) spans.push({ start: offset + match.index, end: offset + end, entity });
  }
}

/** The checks past the pattern, on the match in place (no copy without its separators). */
function valid(entity: Patterned, text: string, start: number, end: number): boolean {
  if (entity === 'card') return luhnOf(text, start, end);
  if (entity === 'iban') return mod97Of(text, start, end);
  if (entity === 'phone') return digitCount(text, start, end) >= 7;
  return true;
}

function digitCount(text: string, start: number, end: number): number {
  let count = 0;
  for (let index = start; index < end; index++) {
    const code = text.charCodeAt(index);
    if (code >= 48 && code <= 57) count++;
  }
  return count;
}

const localChar = /[\p{L}\p{N}._%+-]/u;
const domainChar = /[\p{L}\p{N}.-]/u;
const maximumLocal = 64;
const maximumDomain = 253;
/** The two classes for ASCII, looked up instead of a regex test per character: bit 1 local, bit 2 domain. */
const asciiClasses = Uint8Array.from({ length: 128 }, (_, code) => {
  const char = String.fromCharCode(code);
  return (localChar.test(char) ? 1 : 0) | (domainChar.test(char) ? 2 : 0);
});

function inClass(text: string, index: number, bit: 1 | 2, pattern: RegExp): boolean {
  const code = text.charCodeAt(index);
  return code < 128 ? ((asciiClasses[code] as number) & bit) !== 0 : pattern.test(text[index] as string);
}

/**
 * Emails without a regex: from each `@`, the local part to the left and the domain to the
 * right, each bounded; `@` is in neither class, so every character is visited a bounded
 * number of times.
 */
function findEmails(text: string, spans: Span[]): void {
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    let start = at;
    while (start > 0 && at - start < maximumLocal && inClass(text, start - 1, 1, localChar)) start--;
    while (start < at && (text[start] === '.' || text[start] === '-')) start++;
    let end = at + 1;
    while (end < text.length && end - at <= maximumDomain && inClass(text, end, 2, domainChar)) end++;
    while (end > at + 1 && (text[end - 1] === '.' || text[end - 1] === '-')) end--;
    let dot = end - 1; // the domain's last dot: after its first character, and 2 or more before its end
    while (dot > at + 1 && text.charCodeAt(dot) !== 46) dot--;
    if (start === at || dot <= at + 1 || end - dot - 1 < 2) continue;
    spans.push({ start, end, entity: 'email' });
  }
}

/** Luhn check of the digits of `value` (13 to 19 of them; other characters are separators). */
export function luhn(value: string): boolean {
  return luhnOf(value, 0, value.length);
}

function luhnOf(text: string, start: number, end: number): boolean {
  const count = digitCount(text, start, end);
  if (count < 13 || count > 19) return false;
  let sum = 0;
  let place = 0;
  for (let index = end - 1; index >= start; index--) {
    let digit = text.charCodeAt(index) - 48;
    if (digit < 0 || digit > 9) continue;
    if (place++ % 2 === 1) digit = digit * 2 > 9 ? digit * 2 - 9 : digit * 2;
    sum += digit;
  }
  return sum % 10 === 0;
}

/** IBAN mod-97 check of `value` (15 to 34 characters once its spaces are left out). */
export function mod97(value: string): boolean {
  return mod97Of(value, 0, value.length);
}

function mod97Of(text: string, start: number, end: number): boolean {
  let length = 0;
  let split = start; // after the country code and check digits, which count last
  for (let index = start; index < end; index++) if (text.charCodeAt(index) !== 32 && ++length === 4) split = index + 1;
  if (length < 15 || length > 34) return false;
  return remainderOf(text, start, split, remainderOf(text, split, end, 0)) === 1;
}

/** `remainder` carried on (mod 97) through the characters of `text` in `[from, to)`, spaces left out. */
function remainderOf(text: string, from: number, to: number, remainder: number): number {
  let result = remainder;
  for (let index = from; index < to; index++) {
    const code = text.charCodeAt(index);
    if (code === 32) continue;
    const digit = code >= 65 ? code - 55 : code - 48;
    result = digit > 9 ? (result * 100 + digit) % 97 : (result * 10 + digit) % 97;
  }
  return result;
}
