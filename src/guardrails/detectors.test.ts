import { describe, expect, it } from 'vitest';
import { buildGuardrail } from './build.ts';
import { buildGuardrails } from './guardrail-settings.ts';
import { scan, redact } from './text-scan.ts';
import { luhn, mod97 } from './pii.ts';
import type { TextGuardrail } from './types.ts';

const textGuardrail = (item: Record<string, unknown>): TextGuardrail => {
  const [settings] = buildGuardrails([{ name: 'g', ...item }]);
  const guardrail = buildGuardrail(settings!);
  if (guardrail.kind !== 'text') throw new Error('not a text guardrail');
  return guardrail;
};
const pii = textGuardrail({ type: 'pii' });
const secrets = textGuardrail({ type: 'secrets', action: 'redact' });
const redacted = (guardrail: TextGuardrail, text: string): string => redact(guardrail, text, scan(guardrail, text));
const entities = (guardrail: TextGuardrail, text: string): string[] => scan(guardrail, text).map((span) => span.entity);

/** Milliseconds of one call. */
const timed = (run: () => unknown): number => {
  const start = performance.now();
  run();
  return performance.now() - start;
};

describe('pii', () => {
  it('finds emails, phones, cards (Luhn), IBANs (mod 97) and IPs', () => {
    const text =
      'mail jane.doe+x@example.co.uk, call +1 (555) 123-4567, card 4111 1111 1111 1111, iban DE89 3704 0044 0532 0130 00, ip 192.168.1.20 or 2001:db8::1';
    expect(entities(pii, text)).toEqual(['email', 'phone', 'card', 'iban', 'ip', 'ip']);
    expect(redacted(pii, 'write to jane@example.com now')).toBe('write to [REDACTED_EMAIL] now');
  });

  it('finds IPv6 in full and compressed forms, and IPv4 in a text that can hold no IPv6 (the cheaper scan)', () => {
    const ips = (text: string) => scan(pii, text).map((span) => text.slice(span.start, span.end));
    expect(ips('a 2001:0db8:85a3:0000:0000:8a2e:0370:7334 b')).toEqual(['2001:0db8:85a3:0000:0000:8a2e:0370:7334']);
    expect(ips('at fe80::1, then')).toEqual(['fe80::1']);
    expect(ips('note: at 10:30 the host 10.0.0.7 answered')).toEqual(['10.0.0.7']);
    expect(ips('a:b:c:d:e:f 10.0.0.7 and 1:2:3:4:5:6:7:8')).toEqual(['10.0.0.7', '1:2:3:4:5:6:7:8']);
  });

  it('leaves numbers that fail the checksums, versions and plain words alone', () => {
    expect(entities(pii, 'card 4111 1111 1111 1112, iban DE89 3704 0044 0532 0130 01')).not.toContain('card');
    expect(entities(pii, 'iban DE89 3704 0044 0532 0130 01')).not.toContain('iban');
    expect(entities(pii, 'version 1.2.3, at 10:30, user@localhost, 999.1.1.1')).toEqual([]);
    expect(luhn('4242424242424242')).toBe(true);
    expect(luhn('4242424242424241')).toBe(false);
    expect(mod97('GB82WEST12345698765432')).toBe(true);
    expect(mod97('GB82WEST12345698765433')).toBe(false);
  });

  it('sees through unicode look-alikes: fullwidth characters, zero-width spaces, other digits', () => {
    expect(redacted(pii, 'ｊａｎｅ＠ｅｘａｍｐｌｅ．ｃｏｍ!')).toBe('[REDACTED_EMAIL]!');
    expect(redacted(pii, 'card 4111\u200b1111\u200b1111\u200b1111 ok')).toBe('card [REDACTED_CARD] ok');
    expect(redacted(pii, 'card ٤١١١١١١١١١١١١١١١ ok')).toBe('card [REDACTED_CARD] ok');
    expect(redacted(pii, 'jаne@exаmple.com')).toBe('[REDACTED_EMAIL]'); // Cyrillic а
  });

  it('switches entities and replacement tokens', () => {
    const emailsOnly = textGuardrail({ type: 'pii', entities: ['email'], replacement: '<<<ENTITY>>>' });
    expect(redacted(emailsOnly, 'a@b.io 4111111111111111')).toBe('<<EMAIL>> 4111111111111111');
  });

  it('runs in linear time on 1 MB adversarial inputs', () => {
    const inputs = [
      'a'.repeat(1 << 20),
      '1'.repeat(1 << 20),
      'a@'.repeat(1 << 19),
      '1 '.repeat(1 << 19),
      '@a.'.repeat(349_525),
      '1.'.repeat(1 << 19),
      'DE89 '.repeat(209_715),
      'ab:'.repeat(349_525),
    ];
    for (const input of inputs) expect(timed(() => scan(pii, input))).toBeLessThan(1500);
  });
});

describe('secrets', () => {
  it('finds the common key formats and private key blocks', () => {
    const keys = [
      `sk-proj-${'a'.repeat(40)}`,
      `sk-ant-api03-${'b'.repeat(40)}`,
      'AKIAIOSFODNN7EXAMPLE',
      `ghp_${'c'.repeat(36)}`,
      'xoxb-1234567890-abcdefghij',
      `AIza${'d'.repeat(35)}`,
      '-----BEGIN RSA PRIVATE KEY-----\nMIIEow\nAAAA==\n-----END RSA PRIVATE KEY-----',
    ];
    expect(entities(secrets, keys.join(' and '))).toEqual([
      'openai_key',
      'anthropic_key',
      'aws_access_key',
      'github_token',
      'slack_token',
      'google_api_key',
      'private_key',
    ]);
    expect(redacted(secrets, `key ${keys[0]} end`)).toBe('key [REDACTED_OPENAI_KEY] end');
    expect(entities(secrets, 'a sk-short key, task-force, AKIA123')).toEqual([]);
  });

  it('runs in linear time on 1 MB adversarial inputs', () => {
    const inputs = [
      'sk-'.repeat(349_525),
      `sk-${'a'.repeat(1 << 20)}`,
      '-----BEGIN PRIVATE KEY-----'.repeat(38_000),
      `-----BEGIN PRIVATE KEY-----${'A'.repeat(1 << 20)}`,
    ];
    for (const input of inputs) expect(timed(() => scan(secrets, input))).toBeLessThan(1500);
  });
});

describe('deny_list', () => {
  it('matches terms case-insensitively through look-alikes, and safe regexes', () => {
    const deny = textGuardrail({
      type: 'deny_list',
      terms: ['Project Falcon', 'a.b'],
      patterns: ['\\bticket-\\d{4,8}\\b'],
      action: 'redact',
      replacement: '[X]',
    });
    expect(redacted(deny, 'about PROJECT FАLCON (ticket-12345), a.b not axb')).toBe('about [X] ([X]), [X] not axb');
  });

  it('refuses patterns that could backtrack catastrophically, naming the key', () => {
    for (const pattern of ['(a+)+b', '(a|ab)*c', '(\\w{2,})+x', '((ab)*)+', '(a)\\1', '(?=a)b']) {
      expect(() => buildGuardrails([{ name: 'd', type: 'deny_list', patterns: [pattern] }])).toThrow(/guardrails\.0\.patterns\.0/);
    }
    expect(() => buildGuardrails([{ name: 'd', type: 'deny_list', patterns: ['[(a+)]+', '(ab)+', '(?:x|y)'] }])).not.toThrow();
  });

  it('runs in linear time on 1 MB inputs', () => {
    const deny = textGuardrail({ type: 'deny_list', terms: ['aaab'], patterns: ['\\bticket-\\d{4,8}\\b'] });
    expect(timed(() => scan(deny, 'a'.repeat(1 << 20)))).toBeLessThan(1500);
    expect(timed(() => scan(deny, 'ticket-'.repeat(149_796)))).toBeLessThan(1500);
  });
});

describe('guardrails configuration', () => {
  it('applies defaults', () => {
    expect(buildGuardrails([{ name: 'p', type: 'pii' }])[0]).toMatchObject({
      mode: 'enforce',
      action: 'redact',
      input: true,
      output: true,
      replacement: '[REDACTED_<ENTITY>]',
      entities: ['email', 'phone', 'card', 'iban', 'ip'],
      scope: { userPaths: [], models: [], endpoints: [] },
    });
    expect(buildGuardrails([{ name: 's', type: 'secrets', on: 'input' }])[0]).toMatchObject({
      action: 'block',
      input: true,
      output: false,
    });
  });

  it('fails on unknown types and settings, duplicate names', () => {
    expect(() => buildGuardrails([{ name: 'x', type: 'nope' }])).toThrow(/guardrails\.0\.type: expected one of pii, secrets/);
    expect(() => buildGuardrails([{ name: 'x', type: 'pii', entities: ['ssn'] }])).toThrow(/guardrails\.0\.entities/);
    expect(() => buildGuardrails([{ name: 'x', type: 'pii', acton: 'block' }])).toThrow(/guardrails\.0/);
    expect(() =>
      buildGuardrails([
        { name: 'x', type: 'pii' },
        { name: 'x', type: 'secrets' },
      ]),
    ).toThrow(/a second guardrail named "x"/);
    expect(() => buildGuardrails([{ name: 'x', type: 'max_input_tokens' }])).toThrow(/guardrails\.0\.max_tokens/);
  });
});
