import type { FailoverRuleDefinition } from '../routing/failover-rule.ts';
import { FailoverRuleValidationError, parseFailoverRuleInput } from '../routing/failover-rule-validation.ts';
import { ConfigError } from '../errors/config-error.ts';

const rulesKey = 'failover.rules';

/**
 * Failover rules for direct requests from YAML `failover.rules:` (a list), in declaration order.
 * Every problem names its key, e.g. `failover.rules.1.on.0`; two rules for one model are refused.
 */
export function buildFailoverRules(value: unknown): FailoverRuleDefinition[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new ConfigError(rulesKey, 'expected a list of {model, fallbacks, on}');
  const seen = new Map<string, string>();
  return value.map((item: unknown, index) => {
    const itemKey = `${rulesKey}.${index}`;
    let rule: FailoverRuleDefinition;
    try {
      rule = parseFailoverRuleInput(item, itemKey);
    } catch (error) {
      if (error instanceof FailoverRuleValidationError) throw new ConfigError(error.field, error.message);
      throw error;
    }
    const earlier = seen.get(rule.model);
    if (earlier !== undefined) throw new ConfigError(`${itemKey}.model`, `a second rule for "${rule.model}" (also at ${earlier})`);
    seen.set(rule.model, itemKey);
    return rule;
  });
}
