import { describe, expect, it } from 'vitest';
import { buildBudgetRules } from './budgets.ts';
import { ConfigError } from '../errors/config-error.ts';
import { suffixToUserPath } from './env-paths.ts';
import { thrown } from '../testing/thrown.ts';

describe('suffixToUserPath', () => {
  it.each([
    ['TEAM__ALPHA', '/team/alpha'],
    ['USER_123__PROJECT_A', '/user_123/project_a'],
    ['', '/'],
    ['TEAM', '/team'],
  ])('%j -> %s', (suffix, path) => {
    expect(suffixToUserPath(suffix)).toBe(path);
  });
});

describe('buildBudgetRules', () => {
  it('reads YAML entries with limits lists and flat entries', () => {
    const rules = buildBudgetRules(
      [
        {
          path: 'team',
          limits: [
            { period: 'daily', amount: 10 },
            { period_seconds: 600, amount: 1.5 },
          ],
        },
        { path: '/solo', period: 'monthly', amount: 100 },
      ],
      {},
    );
    expect(rules).toEqual([
      { userPath: '/team', periodSeconds: 86400, amount: 10 },
      { userPath: '/team', periodSeconds: 600, amount: 1.5 },
      { userPath: '/solo', periodSeconds: 2592000, amount: 100 },
    ]);
  });

  it('reads SET_BUDGET_ pairs, JSON objects and JSON arrays; a variable replaces YAML of the same path', () => {
    const rules = buildBudgetRules([{ path: '/team/alpha', period: 'daily', amount: 99 }], {
      SET_BUDGET_TEAM__ALPHA: 'daily=10,weekly=50',
      SET_BUDGET_: '{"monthly": 1000}',
      SET_BUDGET_BATCH: '[{"period_seconds": 3600, "amount": 2}]',
    });
    expect(rules).toEqual([
      { userPath: '/team/alpha', periodSeconds: 86400, amount: 10 },
      { userPath: '/team/alpha', periodSeconds: 604800, amount: 50 },
      { userPath: '/', periodSeconds: 2592000, amount: 1000 },
      { userPath: '/batch', periodSeconds: 3600, amount: 2 },
    ]);
  });

  it('names the key of every mistake', () => {
    expect(thrown(ConfigError, () => buildBudgetRules([], { SET_BUDGET_X: 'daily=abc' })).key).toBe('SET_BUDGET_X');
    expect(thrown(ConfigError, () => buildBudgetRules([], { SET_BUDGET_X: 'fortnightly=3' })).key).toBe('SET_BUDGET_X');
    expect(thrown(ConfigError, () => buildBudgetRules([], { SET_BUDGET_X: 'daily=-1' })).key).toBe('SET_BUDGET_X');
    expect(thrown(ConfigError, () => buildBudgetRules([{ path: '/a', period: 'daily', amount: 0 }], {})).key).toBe(
      'budgets.user_paths.0.limits.0',
    );
    expect(thrown(ConfigError, () => buildBudgetRules([{ path: '/a/../b', period: 'daily', amount: 1 }], {})).key).toBe(
      'budgets.user_paths.0.path',
    );
    expect(
      thrown(ConfigError, () =>
        buildBudgetRules(
          [
            {
              path: '/a',
              limits: [
                { period: 'daily', amount: 1 },
                { period: 'daily', amount: 2 },
              ],
            },
          ],
          {},
        ),
      ).message,
    ).toContain('same period');
  });
});
