import type { Logger } from 'pino';
import { invalidRequest, notFound, type GatewayError } from '../errors/gateway-error.ts';
import type { FailoverRuleDefinition, FailoverRuleStore } from './failover-rule.ts';
import { StoredDefinitions, type DefinitionKind } from '../core/stored-definitions.ts';

export interface FailoverRule extends FailoverRuleDefinition {
  readonly origin: 'config' | 'manual';
  readonly createdAt: number;
  readonly updatedAt: number;
}

export interface FailoverRulesOptions {
  store: FailoverRuleStore;
  configRules: readonly FailoverRuleDefinition[];
  logger: Logger;
  now?: () => number;
  /** How often stored rules are re-read (changes made through another replica); never when absent. */
  reloadIntervalMs?: number;
}

/**
 * Failover rules for direct requests, from configuration (read-only) and the admin API
 * (stored), keyed by their `model`. Replicas pick up each other's changes the way virtual
 * models do (StoredDefinitions).
 */
export class FailoverRules extends StoredDefinitions<FailoverRuleDefinition> {
  constructor(options: FailoverRulesOptions) {
    const { configRules, ...rest } = options;
    super({ ...rest, configDefinitions: configRules }, failoverRuleKind);
  }

  /** The rule of `<instance>/<model>`, else the rule of the bare `<model>`. */
  find(instance: string, model: string): FailoverRule | undefined {
    if (this.entries.size === 0) return undefined;
    return this.entries.get(`${instance}/${model}`) ?? this.entries.get(model);
  }

  list(): FailoverRule[] {
    return [...this.entries.values()].sort((left, right) => (left.model < right.model ? -1 : left.model > right.model ? 1 : 0));
  }
}

const failoverRuleKind: DefinitionKind<FailoverRuleDefinition> = {
  keyOf: (rule) => rule.model,
  logField: 'failover_rule',
  noun: 'failover rule',
  notFound: (model) => notFound(`no failover rule for model ${model}`, { code: 'failover_rule_not_found', param: 'model' }),
  readOnly: (model) => readOnly(model),
};

function readOnly(model: string): GatewayError {
  return invalidRequest(`the failover rule for ${model} comes from configuration and is read-only`, {
    status: 409,
    code: 'rule_read_only',
    param: 'model',
  });
}
