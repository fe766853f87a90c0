import { budgetPeriods, isNamedBudgetPeriod } from '../budgets/periods.ts';
import { ConfigError } from '../errors/config-error.ts';
import { configUserPath, pathVariables } from './env-paths.ts';
import { numericValue } from './values.ts';
import { isJsonObject } from '../core/json.ts';
import type { BudgetRuleSettings } from '../budgets/budget-settings.ts';

type Env = Readonly<Record<string, string | undefined>>;

/** `SET_BUDGET_<PATH>`: budget rules of one user path. */
export const budgetVariablePrefix = 'SET_BUDGET_';

/**
 * Budget rules from YAML `budgets.user_paths` and `SET_BUDGET_<PATH>` variables. A variable
 * replaces the YAML rules of the same path. Values: `daily=10,weekly=50`, a JSON object
 * `{"daily": 10}`, or a JSON array of `{period | period_seconds, amount}`.
 */
export function buildBudgetRules(yamlEntries: unknown, env: Env): BudgetRuleSettings[] {
  const byPath = new Map<string, BudgetRuleSettings[]>();
  const entries = yamlEntries ?? [];
  if (!Array.isArray(entries)) throw new ConfigError('budgets.user_paths', 'expected a list');
  entries.forEach((entry: unknown, index) => {
    const key = `budgets.user_paths.${index}`;
    if (!isJsonObject(entry) || typeof entry['path'] !== 'string') throw new ConfigError(`${key}.path`, 'expected a user path string');
    const path = configUserPath(`${key}.path`, entry['path']);
    const limits = entry['limits'] ?? [entry];
    if (!Array.isArray(limits)) throw new ConfigError(`${key}.limits`, 'expected a list of {period, amount}');
    const rules = limits.map((limit: unknown, position) => ruleFrom(`${key}.limits.${position}`, path, limit));
    byPath.set(path.toLowerCase(), [...(byPath.get(path.toLowerCase()) ?? []), ...rules]);
  });
  for (const [variable, path, value] of pathVariables(env, budgetVariablePrefix)) {
    byPath.set(path.toLowerCase(), parseBudgetValue(variable, path, value));
  }
  const rules = [...byPath.values()].flat();
  const seen = new Set<string>();
  for (const rule of rules) {
    const identity = `${rule.userPath.toLowerCase()} ${rule.periodSeconds}`;
    if (seen.has(identity))
      throw new ConfigError('budgets', `two budgets for ${rule.userPath} with the same period (${rule.periodSeconds}s)`);
    seen.add(identity);
  }
  return rules;
}

function parseBudgetValue(variable: string, path: string, value: string): BudgetRuleSettings[] {
  if (value.startsWith('[')) {
    const parsed = parseJson(variable, value);
    if (!Array.isArray(parsed)) throw new ConfigError(variable, 'expected a JSON array of {period, amount}');
    return parsed.map((item: unknown) => ruleFrom(variable, path, item));
  }
  const pairs: Array<[string, unknown]> = value.startsWith('{')
    ? Object.entries(asRecord(variable, parseJson(variable, value)))
    : value.split(',').map((pair) => {
        const [name, amount] = pair.split('=').map((part) => part.trim());
        if (!name || amount === undefined)
          throw new ConfigError(variable, `expected period=amount pairs such as daily=10, got ${JSON.stringify(pair)}`);
        return [name, Number(amount)];
      });
  return pairs.map(([period, amount]) => ruleFrom(variable, path, { period, amount }));
}

function ruleFrom(key: string, userPath: string, limit: unknown): BudgetRuleSettings {
  const fields = asRecord(key, limit);
  const amount = numericValue(fields['amount']);
  if (typeof amount !== 'number' || !Number.isFinite(amount) || amount <= 0) {
    throw new ConfigError(key, `amount must be a number of dollars above 0, got ${JSON.stringify(amount)}`);
  }
  const period = fields['period'];
  const seconds = numericValue(fields['period_seconds']);
  if (typeof period === 'string' && isNamedBudgetPeriod(period)) return { userPath, periodSeconds: budgetPeriods[period], amount };
  if (period === undefined && typeof seconds === 'number' && Number.isInteger(seconds) && seconds >= 60) {
    return { userPath, periodSeconds: seconds, amount };
  }
  throw new ConfigError(key, 'expected period hourly, daily, weekly or monthly, or period_seconds (an integer of at least 60)');
}

function parseJson(key: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new ConfigError(key, 'not valid JSON');
  }
}

function asRecord(key: string, value: unknown): Record<string, unknown> {
  if (!isJsonObject(value)) throw new ConfigError(key, 'expected an object');
  return value;
}
