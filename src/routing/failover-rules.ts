import type { Logger } from 'pino';
import { invalidRequest, notFound, type GatewayError } from '../errors/gateway-error.ts';
import type { FailoverRuleDefinition, FailoverRuleRow, FailoverRuleStore } from './failover-rule.ts';

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
 * models do: the store is re-read every `reloadIntervalMs`, and before every local write.
 */
export class FailoverRules {
  private readonly options: FailoverRulesOptions;
  private readonly now: () => number;
  private readonly rules = new Map<string, FailoverRule>();
  /** Bumped by every local write, so a reload that read the store before it is dropped. */
  private writes = 0;
  private timer: NodeJS.Timeout | null = null;

  constructor(options: FailoverRulesOptions) {
    this.options = options;
    this.now = options.now ?? Date.now;
  }

  async start(): Promise<void> {
    const at = this.now();
    for (const definition of this.options.configRules)
      this.rules.set(definition.model, { ...definition, origin: 'config', createdAt: at, updatedAt: at });
    for (const row of await this.options.store.list()) {
      if (this.rules.get(row.model)?.origin === 'config') {
        this.options.logger.warn({ failover_rule: row.model }, 'a stored failover rule is shadowed by a configuration one');
        continue;
      }
      this.rules.set(row.model, { ...row, origin: 'manual' });
    }
    const interval = this.options.reloadIntervalMs;
    if (interval === undefined) return;
    this.timer = setInterval(
      () => void this.reload().catch((error: unknown) => this.options.logger.warn({ err: error }, 'failover rule reload failed')),
      interval,
    );
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }

  /** Applies the stored rules as another replica left them; configuration ones stay. */
  async reload(): Promise<void> {
    const writesBefore = this.writes;
    const rows = await this.options.store.list();
    if (this.writes !== writesBefore) return;
    const stored = new Set(rows.map((row) => row.model));
    for (const [model, rule] of this.rules) if (rule.origin === 'manual' && !stored.has(model)) this.rules.delete(model);
    for (const row of rows) if (this.rules.get(row.model)?.origin !== 'config') this.rules.set(row.model, { ...row, origin: 'manual' });
  }

  get size(): number {
    return this.rules.size;
  }

  /** The rule of `<instance>/<model>`, else the rule of the bare `<model>`. */
  find(instance: string, model: string): FailoverRule | undefined {
    if (this.rules.size === 0) return undefined;
    return this.rules.get(`${instance}/${model}`) ?? this.rules.get(model);
  }

  list(): FailoverRule[] {
    return [...this.rules.values()].sort((left, right) => (left.model < right.model ? -1 : left.model > right.model ? 1 : 0));
  }

  async upsert(definition: FailoverRuleDefinition): Promise<FailoverRule> {
    // Catch up with the database first: the rule may have been made through another replica.
    await this.reload();
    const existing = this.rules.get(definition.model);
    if (existing?.origin === 'config') throw readOnly(definition.model);
    const at = this.now();
    const row: FailoverRuleRow = { ...definition, createdAt: existing?.createdAt ?? at, updatedAt: at };
    await this.options.store.upsert(row);
    this.writes += 1;
    const rule: FailoverRule = { ...row, origin: 'manual' };
    this.rules.set(definition.model, rule);
    return rule;
  }

  async remove(model: string): Promise<void> {
    await this.reload();
    const existing = this.rules.get(model);
    if (existing === undefined) throw notFound(`no failover rule for model ${model}`, { code: 'failover_rule_not_found', param: 'model' });
    if (existing.origin === 'config') throw readOnly(model);
    await this.options.store.remove(model);
    this.writes += 1;
    this.rules.delete(model);
  }
}

function readOnly(model: string): GatewayError {
  return invalidRequest(`the failover rule for ${model} comes from configuration and is read-only`, {
    status: 409,
    code: 'rule_read_only',
    param: 'model',
  });
}
