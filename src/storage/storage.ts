import type { ApiKeyStore } from '../auth/api-keys/api-key-store.ts';
import type { AuditStore } from '../audit/audit-store.ts';
import type { BudgetStore } from '../budgets/budget-store.ts';
import type { McpServerStore, McpVirtualServerStore } from '../mcp/mcp-definitions.ts';
import type { RateLimitRuleStore } from '../ratelimit/rule-store.ts';
import type { ResponseStore } from '../responses/response-store.ts';
import type { VirtualModelStore } from '../routing/virtual-model.ts';
import type { FailoverRuleStore } from '../routing/failover-rule.ts';
import type { GuardrailStore } from '../guardrails/guardrail-store.ts';
import type { UsageStore } from '../usage/usage-store.ts';
import type { RequestLogStore } from '../request-log/request-log-store.ts';
import type { OwnershipStore } from '../ownership/ownership-store.ts';

/** Every durable store of the gateway, from one database. */
export interface Storage {
  readonly kind: 'sqlite' | 'postgresql';
  readonly usage: UsageStore;
  readonly apiKeys: ApiKeyStore;
  readonly budgets: BudgetStore;
  readonly rateLimitRules: RateLimitRuleStore;
  readonly virtualModels: VirtualModelStore;
  readonly failoverRules: FailoverRuleStore;
  /** Guardrails managed through `/admin/guardrails`. */
  readonly guardrails: GuardrailStore;
  readonly mcpServers: McpServerStore;
  readonly mcpVirtualServers: McpVirtualServerStore;
  /** Responses API state (`/v1/responses` through the chat translation). */
  readonly responses: ResponseStore;
  readonly requestLog: RequestLogStore;
  /** The admin audit trail (`GET /admin/audit`). */
  readonly audit: AuditStore;
  /** Owners of files, batches and native responses created upstream through the gateway. */
  readonly ownership: OwnershipStore;
  /** Cheap round trip for /health/ready; false when the database does not answer. */
  ping(): Promise<boolean>;
  close(): Promise<void>;
}

export type StorageSettings =
  { readonly type: 'sqlite'; readonly sqlitePath: string } | { readonly type: 'postgresql'; readonly databaseUrl: string };
