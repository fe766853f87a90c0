import { describe, expect, it } from 'vitest';
import { periodLabel, periodSecondsOf } from './periods.ts';
import { RuleValidationError, validateRule, type RuleDraft } from './rules.ts';

const draft = (overrides: Partial<RuleDraft>): RuleDraft => ({
  scope: 'user_path',
  subject: '/',
  periodSeconds: 60,
  maxRequests: 1,
  maxTokens: null,
  ...overrides,
});

const invalid = (overrides: Partial<RuleDraft>): RuleValidationError => {
  try {
    validateRule(draft(overrides));
  } catch (error) {
    if (error instanceof RuleValidationError) return error;
    throw error;
  }
  throw new Error('expected a RuleValidationError');
};

describe('rule validation', () => {
  it('normalises paths and lower-cases provider and model subjects', () => {
    expect(validateRule(draft({ subject: 'team/alpha/' })).subject).toBe('/team/alpha');
    expect(validateRule(draft({ subject: '' })).subject).toBe('/');
    expect(validateRule(draft({ scope: 'provider', subject: ' OpenAI ' })).subject).toBe('openai');
    expect(validateRule(draft({ scope: 'model', subject: 'OpenAI/GPT-4o' })).subject).toBe('openai/gpt-4o');
  });

  it.each([
    [{ periodSeconds: -1 }, 'period_seconds'],
    [{ maxRequests: null, maxTokens: null }, 'max_requests'],
    [{ maxRequests: 0 }, 'max_requests'],
    [{ maxTokens: 0 }, 'max_tokens'],
    [{ periodSeconds: 0, maxTokens: 5 }, 'max_tokens'],
    [{ periodSeconds: 0, maxRequests: null }, 'max_requests'],
    [{ subject: '/a/../b' }, 'subject'],
    [{ scope: 'provider', subject: '' }, 'subject'],
    [{ scope: 'provider', subject: 'a/b' }, 'subject'],
    [{ scope: 'model', subject: '/gpt' }, 'subject'],
    [{ scope: 'team' as never }, 'scope'],
  ] as Array<[Partial<RuleDraft>, string]>)('refuses %j naming %s', (overrides, field) => {
    expect(invalid(overrides).field).toBe(field);
  });
});

describe('periods', () => {
  it('names and labels periods', () => {
    expect([
      periodSecondsOf('minute'),
      periodSecondsOf('Hourly'),
      periodSecondsOf('day'),
      periodSecondsOf('concurrent'),
      periodSecondsOf('fortnight'),
    ]).toEqual([60, 3600, 86400, 0, null]);
    expect([periodLabel(0), periodLabel(60), periodLabel(3600), periodLabel(86400), periodLabel(7200)]).toEqual([
      'concurrent',
      'minute',
      'hour',
      'day',
      '7200s',
    ]);
  });
});
