/** A budget rule declared in configuration (origin `config`). */
export interface BudgetRuleSettings {
  readonly userPath: string;
  readonly periodSeconds: number;
  /** USD. */
  readonly amount: number;
}
