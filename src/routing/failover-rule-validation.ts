import { failoverTriggers, type FailoverRuleDefinition, type FailoverTrigger } from './failover-rule.ts';

/** A failover rule that cannot be accepted; `field` is the full key, e.g. `failover.rules.0.on.1`. */
export class FailoverRuleValidationError extends Error {
  readonly field: string;

  constructor(field: string, message: string) {
    super(message);
    this.name = 'FailoverRuleValidationError';
    this.field = field;
  }
}

export const failoverSelectorMaxLength = 400;
export const failoverFallbacksMax = 20;

const allowedFields = new Set(['model', 'fallbacks', 'on']);

/**
 * Validates one failover rule, as written in YAML `failover.rules:` or an admin request body:
 * `{model, fallbacks: [selector...], on?: [5xx | 429 | timeout | connection | saturated]}`.
 * `key` prefixes every error field (`''` for none). `on` defaults to all five triggers; a YAML
 * `429` (a number) is read as the trigger `429`.
 */
export function parseFailoverRuleInput(value: unknown, key: string): FailoverRuleDefinition {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new FailoverRuleValidationError(key, 'expected an object');
  const input = value as Record<string, unknown>;
  const unknown = Object.keys(input).find((field) => !allowedFields.has(field));
  if (unknown !== undefined) {
    throw new FailoverRuleValidationError(fieldOf(key, unknown), `unknown field (expected ${[...allowedFields].join(', ')})`);
  }
  const model = parseSelector(input['model'], fieldOf(key, 'model'), 'model');
  return {
    model,
    fallbacks: parseFallbacks(input['fallbacks'], fieldOf(key, 'fallbacks'), model),
    on: parseOn(input['on'], fieldOf(key, 'on')),
  };
}

function parseSelector(value: unknown, field: string, what: string): string {
  if (value === undefined || value === null || value === '') throw new FailoverRuleValidationError(field, `${what} is required`);
  if (typeof value !== 'string') throw new FailoverRuleValidationError(field, `${what} must be a string`);
  const selector = value.trim();
  if (selector === '') throw new FailoverRuleValidationError(field, `${what} is required`);
  if (selector.length > failoverSelectorMaxLength) {
    throw new FailoverRuleValidationError(field, `${what} must be at most ${failoverSelectorMaxLength} characters`);
  }
  if (/[\s\p{Cc}]/u.test(selector)) {
    throw new FailoverRuleValidationError(field, `${what} must not contain whitespace or control characters`);
  }
  return selector;
}

function parseFallbacks(value: unknown, field: string, model: string): string[] {
  if (value === undefined || value === null) throw new FailoverRuleValidationError(field, 'at least one fallback is required');
  if (!Array.isArray(value)) throw new FailoverRuleValidationError(field, 'fallbacks must be a list of model selectors');
  if (value.length === 0) throw new FailoverRuleValidationError(field, 'at least one fallback is required');
  if (value.length > failoverFallbacksMax) {
    throw new FailoverRuleValidationError(field, `at most ${failoverFallbacksMax} fallbacks are allowed`);
  }
  const fallbacks: string[] = [];
  value.forEach((item: unknown, index) => {
    const itemField = `${field}.${index}`;
    const selector = parseSelector(item, itemField, 'a fallback');
    if (selector === model) throw new FailoverRuleValidationError(itemField, `a fallback may not be the rule's own model "${model}"`);
    if (fallbacks.includes(selector)) throw new FailoverRuleValidationError(itemField, `duplicate fallback "${selector}"`);
    fallbacks.push(selector);
  });
  return fallbacks;
}

function parseOn(value: unknown, field: string): FailoverTrigger[] {
  if (value === undefined || value === null) return [...failoverTriggers];
  if (!Array.isArray(value)) throw new FailoverRuleValidationError(field, `on must be a list of ${failoverTriggers.join(', ')}`);
  if (value.length === 0) throw new FailoverRuleValidationError(field, `on must name at least one of ${failoverTriggers.join(', ')}`);
  const triggers = new Set<FailoverTrigger>();
  value.forEach((item: unknown, index) => {
    const text = typeof item === 'number' ? String(item) : item;
    const trigger = failoverTriggers.find((candidate) => candidate === text);
    if (trigger === undefined) {
      throw new FailoverRuleValidationError(
        `${field}.${index}`,
        `expected one of ${failoverTriggers.join(', ')}, got ${JSON.stringify(item)}`,
      );
    }
    triggers.add(trigger);
  });
  // Declared order does not matter: kept in the canonical order, so rules compare equal.
  return failoverTriggers.filter((trigger) => triggers.has(trigger));
}

function fieldOf(key: string, field: string): string {
  return key === '' ? field : `${key}.${field}`;
}
