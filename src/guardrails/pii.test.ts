import { describe, expect, it } from 'vitest';
import { luhn, mod97, piiEntities, piiFinder, piiPatterns, type PiiEntity } from './pii.ts';
import type { Span } from './types.ts';

const localChar = /[\p{L}\p{N}._%+-]/u;
const domainChar = /[\p{L}\p{N}.-]/u;

/** Emails as the first version found them: a regex test per character. */
function referenceEmails(text: string, spans: Span[]): void {
  for (let at = text.indexOf('@'); at !== -1; at = text.indexOf('@', at + 1)) {
    let start = at;
    while (start > 0 && at - start < 64 && localChar.test(text[start - 1] as string)) start--;
    while (start < at && (text[start] === '.' || text[start] === '-')) start++;
    let end = at + 1;
    while (end < text.length && end - at <= 253 && domainChar.test(text[end] as string)) end++;
    while (end > at + 1 && (text[end - 1] === '.' || text[end - 1] === '-')) end--;
    const domain = text.slice(at + 1, end);
    const dot = domain.lastIndexOf('.');
    if (start === at || dot <= 0 || domain.length - dot - 1 < 2) continue;
    spans.push({ start, end, entity: 'email' });
  }
}

/** The plain scan the windowed one must equal: every pattern over the whole text, checks on copies. */
function referenceFind(text: string, entities: ReadonlySet<PiiEntity>): Span[] {
  const spans: Span[] = [];
  if (entities.has('email')) referenceEmails(text, spans);
  for (const entity of ['card', 'iban', 'ip', 'phone'] as const) {
    if (!entities.has(entity)) continue;
    const pattern = new RegExp(piiPatterns[entity].source, 'g');
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) {
      const value = match[0];
      const ok =
        entity === 'card'
          ? luhn(value.replace(/[ -]/g, ''))
          : entity === 'iban'
            ? mod97(value.replace(/ /g, ''))
            : entity === 'phone'
              ? value.replace(/\D/g, '').length >= 7
              : true;
      if (ok) spans.push({ start: match.index, end: match.index + value.length, entity });
    }
  }
  return spans;
}

/** What `scan` keeps of spans: sorted (stable) by start, longer first, overlaps dropped. */
function kept(spans: readonly Span[]): Span[] {
  const sorted = [...spans].sort((a, b) => a.start - b.start || b.end - a.end);
  let end = -1;
  return sorted.filter((span) => (span.start < end ? false : ((end = span.end), true)));
}

/** The finder's spans equal the reference's, as a set and in what scan keeps of them (ties included). */
function expectSame(text: string, entities: ReadonlySet<PiiEntity>): void {
  const found = piiFinder(entities)(text);
  const reference = referenceFind(text, entities);
  const order = (a: Span, b: Span) => a.start - b.start || a.end - b.end || a.entity.localeCompare(b.entity);
  expect([...found].sort(order)).toEqual([...reference].sort(order));
  expect(kept(found)).toEqual(kept(reference));
}

/** A seeded generator (mulberry32): the same texts on every run. */
function random(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

const pieces = [
  '4111 1111 1111 1111',
  '4111-1111-1111-1111',
  '4242424242424242',
  'GB82 WEST 1234 5698 7654 32',
  'DE89370400440532013000',
  'DE89 3704 0044 0532 0130 00 ABCDEFGHIJKLMNOPQRSTUVWXYZ ABCDEFGHIJ',
  'AB12 C D E F G H I J K L M N O P Q R S T U V W X Y Z A B C D E F G',
  'AB12CDEFGHIJKLMNOPQRSTUVWXYZABCDEFG',
  '+44 20 7946 0958',
  '+1 (555) 123-4567',
  '(0)30 1234 5678',
  '192.168.10.24',
  '10.0.0.7',
  '2001:db8::1',
  'fe80::1',
  '1:2:3:4:5:6:7:8',
  'jane.doe@example.com',
  '12',
  'jane.doe@example.com',
  'josé.müller@exämple.de',
  '²@a.bc',
  'a@b.c',
  '.a-@-b.co.',
  'x@y..zz',
  '@@a.bc@',
  '7',
  '2024-01-05',
];
const characters = '0123456789 -.:+()ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefxyz@_\n';

/** Texts of PII-like pieces, random characters and prose gaps of every length around the window sizes. */
function texts(count: number, seed: number, maximumParts = 8): string[] {
  const next = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
  const result: string[] = [];
  for (let index = 0; index < count; index++) {
    let text = '';
    const parts = 1 + Math.floor(next() * maximumParts);
    for (let part = 0; part < parts; part++) {
      const kind = next();
      if (kind < 0.4) text += pick(pieces);
      else if (kind < 0.7) for (let length = Math.floor(next() * 40); length > 0; length--) text += pick([...characters]);
      else text += 'x '.repeat(Math.floor(next() * 160)).slice(Math.floor(next() * 2));
    }
    result.push(text);
  }
  return result;
}

describe('piiFinder', () => {
  const all: ReadonlySet<PiiEntity> = new Set(piiEntities);

  it('finds in windows around digits exactly what the patterns find over the whole text, emails as before', () => {
    for (const text of texts(4000, 20)) expectSame(text, all);
  });

  it('and in long texts with numbers all over, where the last window runs to the end', () => {
    for (const text of texts(400, 22, 60)) expectSame(text, all);
  });

  it('does so for each entity alone', () => {
    for (const entity of piiEntities) {
      const one: ReadonlySet<PiiEntity> = new Set([entity]);
      for (const text of texts(500, 21)) expectSame(text, one);
    }
  });

  it('finds matches at the edges of windows: an IBAN with its letters, a phone after a long gap', () => {
    const iban = 'GB82 WEST 1234 5698 7654 32';
    const text = `${'word '.repeat(60)}${iban}${' '.repeat(127)}+44 20 7946 0958${'.'.repeat(128)}(0)30 1234 5678`;
    const found = piiFinder(all)(text).map((span) => text.slice(span.start, span.end));
    expect(found).toEqual(expect.arrayContaining([iban, '+44 20 7946 0958', '(0)30 1234 5678']));
    expectSame(text, all);
  });

  it('checks Luhn and mod 97 with or without separators', () => {
    expect(luhn('4111 1111 1111 1111')).toBe(true);
    expect(luhn('4111-1111-1111-1112')).toBe(false);
    expect(luhn('411111111111')).toBe(false); // 12 digits
    expect(mod97('GB82 WEST 1234 5698 7654 32')).toBe(true);
    expect(mod97('GB82 WEST 1234 5698 7654 33')).toBe(false);
    expect(mod97('GB82 WEST 1234')).toBe(false); // too short
  });
});
