import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FailoverRuleValidationError, parseFailoverRuleInput } from '../routing/failover-rule-validation.ts';
import { thrown } from '../testing/thrown.ts';
import { ConfigError } from '../errors/config-error.ts';
import { buildFailoverRules } from './failover.ts';
import { loadSettings } from './load.ts';

const allTriggers = ['5xx', '429', 'timeout', 'connection', 'saturated'];
const keyOf = (rules: unknown): string => thrown(ConfigError, () => buildFailoverRules(rules)).key;

describe('buildFailoverRules', () => {
  it('is empty without declarations', () => {
    expect(buildFailoverRules(undefined)).toEqual([]);
    expect(buildFailoverRules(null)).toEqual([]);
    expect(buildFailoverRules([])).toEqual([]);
  });

  it('reads rules in order, with `on` defaulting to all five triggers and kept in canonical order', () => {
    expect(
      buildFailoverRules([
        { model: 'openai/gpt-4o', fallbacks: ['anthropic/claude', 'gpt-4o-mini'] },
        { model: ' gpt-4o-mini ', fallbacks: ['b/gpt-4o-mini'], on: ['saturated', 429, '5xx', 429] },
      ]),
    ).toEqual([
      { model: 'openai/gpt-4o', fallbacks: ['anthropic/claude', 'gpt-4o-mini'], on: allTriggers },
      { model: 'gpt-4o-mini', fallbacks: ['b/gpt-4o-mini'], on: ['5xx', '429', 'saturated'] },
    ]);
  });

  it('names the key of each problem', () => {
    expect(keyOf({ model: 'm' })).toBe('failover.rules');
    expect(keyOf(['m'])).toBe('failover.rules.0');
    expect(keyOf([{ model: 'm', fallbacks: ['n'], when: ['5xx'] }])).toBe('failover.rules.0.when');
    expect(keyOf([{ fallbacks: ['n'] }])).toBe('failover.rules.0.model');
    expect(keyOf([{ model: 'a b', fallbacks: ['n'] }])).toBe('failover.rules.0.model');
    expect(keyOf([{ model: 'm' }])).toBe('failover.rules.0.fallbacks');
    expect(keyOf([{ model: 'm', fallbacks: [] }])).toBe('failover.rules.0.fallbacks');
    expect(keyOf([{ model: 'm', fallbacks: 'n' }])).toBe('failover.rules.0.fallbacks');
    expect(keyOf([{ model: 'm', fallbacks: ['n', 7] }])).toBe('failover.rules.0.fallbacks.1');
    expect(keyOf([{ model: 'm', fallbacks: ['n', 'm'] }])).toBe('failover.rules.0.fallbacks.1');
    expect(keyOf([{ model: 'm', fallbacks: ['n', 'n'] }])).toBe('failover.rules.0.fallbacks.1');
    expect(keyOf([{ model: 'm', fallbacks: ['n'], on: [] }])).toBe('failover.rules.0.on');
    expect(keyOf([{ model: 'm', fallbacks: ['n'], on: '5xx' }])).toBe('failover.rules.0.on');
    expect(keyOf([{ model: 'm', fallbacks: ['n'], on: ['5xx', '4xx'] }])).toBe('failover.rules.0.on.1');
    expect(keyOf([{ model: 'm', fallbacks: ['n'], on: [500] }])).toBe('failover.rules.0.on.0');
  });

  it('refuses a second rule for the same model', () => {
    const error = thrown(ConfigError, () =>
      buildFailoverRules([
        { model: 'a/m', fallbacks: ['b/m'] },
        { model: 'a/m', fallbacks: ['c/m'] },
      ]),
    );
    expect(error.key).toBe('failover.rules.1.model');
    expect(error.message).toContain('failover.rules.0');
  });

  it('parses admin bodies with unprefixed fields', () => {
    const error = thrown(FailoverRuleValidationError, () => parseFailoverRuleInput({ model: 'm', fallbacks: ['n'], on: ['later'] }, ''));
    expect(error.field).toBe('on.0');
    expect(error.message).toContain('5xx, 429, timeout, connection, saturated');
  });
});

describe('failover rules in loadSettings', () => {
  const load = (yaml: string) => {
    const cwd = mkdtempSync(join(tmpdir(), 'failover-config-'));
    writeFileSync(join(cwd, 'config.yaml'), yaml);
    return loadSettings({ argv: [], env: {}, cwd });
  };

  it('reads failover.rules from YAML (a bare 429 included) and freezes them', () => {
    const { settings, warnings } = load(
      ['failover:', '  rules:', '    - model: main/m', '      fallbacks: [other/m]', '      on: [5xx, 429]'].join('\n'),
    );
    expect(warnings).toEqual([]);
    expect(settings.failoverRules).toEqual([{ model: 'main/m', fallbacks: ['other/m'], on: ['5xx', '429'] }]);
    expect(Object.isFrozen(settings.failoverRules[0]?.on)).toBe(true);
    expect(load('logging: {level: info}\n').settings.failoverRules).toEqual([]);
  });

  it('refuses a malformed section or rule at startup, naming the key', () => {
    expect(thrown(ConfigError, () => load('failover: [1]\n')).key).toBe('failover');
    expect(thrown(ConfigError, () => load('failover:\n  rules: {model: m}\n')).key).toBe('failover.rules');
    const error = thrown(ConfigError, () => load('failover:\n  rules:\n    - {model: m, fallbacks: [n], on: [5xx, sometimes]}\n'));
    expect(error.key).toBe('failover.rules.0.on.1');
    expect(error.message).toContain('"sometimes"');
  });
});
