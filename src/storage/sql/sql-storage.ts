import type { Storage } from '../storage.ts';
import { guardExecutor } from './guarded-executor.ts';
import type { SqlExecutor } from './sql-executor.ts';
import { SqlApiKeyStore } from './sql-api-key-store.ts';
import { SqlAuditStore } from './sql-audit-store.ts';
import { SqlBudgetStore } from './sql-budget-store.ts';
import { SqlMcpServerStore, SqlMcpVirtualServerStore } from './sql-mcp-stores.ts';
import { SqlRateLimitRuleStore } from './sql-rate-limit-rule-store.ts';
import { SqlResponseStore } from './sql-response-store.ts';
import { SqlUsageStore } from './sql-usage-store.ts';
import { SqlVirtualModelStore } from './sql-virtual-model-store.ts';
import { SqlFailoverRuleStore } from './sql-failover-rule-store.ts';
import { SqlGuardrailStore } from './sql-guardrail-store.ts';
import { SqlRequestLogStore } from './sql-request-log-store.ts';
import { SqlOwnershipStore } from './sql-ownership-store.ts';

/** The stores of one database, sharing its executor. Closing twice is harmless. */
export function createSqlStorage(raw: SqlExecutor): Storage {
  const executor = guardExecutor(raw);
  let closing: Promise<void> | undefined;
  return {
    kind: executor.dialect,
    usage: new SqlUsageStore(executor),
    apiKeys: new SqlApiKeyStore(executor),
    budgets: new SqlBudgetStore(executor),
    rateLimitRules: new SqlRateLimitRuleStore(executor),
    virtualModels: new SqlVirtualModelStore(executor),
    failoverRules: new SqlFailoverRuleStore(executor),
    guardrails: new SqlGuardrailStore(executor),
    mcpServers: new SqlMcpServerStore(executor),
    mcpVirtualServers: new SqlMcpVirtualServerStore(executor),
    responses: new SqlResponseStore(executor),
    requestLog: new SqlRequestLogStore(executor),
    audit: new SqlAuditStore(executor),
    ownership: new SqlOwnershipStore(executor),
    ping: () => executor.ping(),
    close: () => (closing ??= executor.close()),
  };
}
