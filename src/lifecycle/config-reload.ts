import type { Logger } from 'pino';
import { ConfigError } from '../errors/config-error.ts';
import type { LoadedSettings, Settings } from '../config/settings.ts';
import { invalidRequest, type GatewayError } from '../errors/gateway-error.ts';
import type { BudgetService } from '../budgets/budget-service.ts';
import type { McpGateway } from '../mcp/mcp-gateway.ts';
import type { RateLimiter } from '../ratelimit/rate-limiter.ts';
import type { FailoverRules } from '../routing/failover-rules.ts';
import type { StoredGuardrails } from '../guardrails/stored-guardrails.ts';
import type { VirtualModels } from '../routing/virtual-models.ts';
import type { PriceBook } from '../usage/pricing.ts';
import { swapProviders, type ProviderRuntime } from './provider-reload.ts';

export interface ConfigReloadOptions {
  /** Reads the configuration again, as at startup (same file, same environment); throws ConfigError. */
  read: () => LoadedSettings;
  settings: Settings;
  limiter: RateLimiter | null;
  /** Null when budgets are off (their rules then wait for a restart with budgets on). */
  budgets: BudgetService | null;
  virtualModels: VirtualModels;
  /** Null when MCP is off (its declarations then wait for a restart with MCP on). */
  mcp: McpGateway | null;
  failoverRules: FailoverRules;
  prices: PriceBook;
  /** The provider registry to swap; absent: a change of providers is refused (restart needed). */
  providers?: ProviderRuntime;
  /** YAML guardrails are rebuilt (absent in tests that do not run them). */
  guardrails?: StoredGuardrails | null;
  logger: Logger;
}

/** What a reload applied, and the sections that changed but need a restart (kept as they were). */
export interface ReloadOutcome {
  applied: string[];
  restart_needed: string[];
}

/** Applied by a reload: providers, pricing, rules, budgets, virtual models, failover rules, MCP servers, virtual servers and guardrails. */
const appliedSections = [
  'providers',
  'pricing',
  'rate_limits.rules',
  'budgets.rules',
  'virtual_models',
  'failover.rules',
  'mcp.servers',
  'mcp.virtual_servers',
  'guardrails',
] as const;

/**
 * Hot reload (SIGHUP, POST /admin/reload): re-reads the configuration file and swaps the rules
 * it declares, each in one step, without touching requests or streams in flight. Counters of
 * rules kept survive. Providers are swapped too (src/lifecycle/provider-reload.ts): calls in
 * flight finish on the adapter and pool they hold. An invalid file is refused as a whole: the
 * old configuration stays. Reloads run one at a time.
 */
export class ConfigReloader {
  private readonly options: ConfigReloadOptions;
  private settings: Settings;
  /** The settings the process started with: what a section needing a restart still runs on. */
  private readonly startedWith: Settings;
  private running: Promise<unknown> = Promise.resolve();

  constructor(options: ConfigReloadOptions) {
    this.options = options;
    this.settings = options.settings;
    this.startedWith = options.settings;
  }

  /** Throws a 400 GatewayError naming the key when the new configuration is refused. */
  reload(): Promise<ReloadOutcome> {
    const next = this.running.then(() => this.reloadOnce());
    this.running = next.catch(() => undefined);
    return next;
  }

  /** SIGHUP: reload, logging the outcome (a refusal is logged with its reason). */
  async reloadLogged(): Promise<void> {
    await this.reload().catch(() => undefined);
  }

  private async reloadOnce(): Promise<ReloadOutcome> {
    const { logger } = this.options;
    let loaded: LoadedSettings;
    try {
      loaded = this.options.read();
      if (this.options.providers === undefined) refuseProviderChanges(this.settings, loaded.settings);
      // First: guardrail modules and entries are checked before anything is applied (a refusal keeps everything).
      await this.options.guardrails?.applyConfigDefinitions(
        loaded.settings.guardrails.map((entry) => ({ name: entry.name, settings: entry })),
      );
    } catch (error) {
      const refusal = refusalOf(error);
      logger.error({ err: error, param: refusal.param }, `configuration reload refused, the old configuration is kept: ${refusal.message}`);
      throw refusal;
    }
    const { settings, warnings } = loaded;
    for (const warning of warnings) logger.warn(warning);
    // Providers first: virtual models and failover rules may name an instance the file adds.
    if (this.options.providers !== undefined) {
      this.options.providers.catalog.replaceDisabled(settings.disabledProviders);
      await swapProviders(this.options.providers, this.settings.providers, settings.providers, logger);
    }
    this.options.prices.replace(new Map(Object.entries(settings.pricing)));
    await this.options.limiter?.applyConfigRules(settings.rateLimits.rules);
    await this.options.budgets?.applyConfigRules(settings.budgets.rules);
    await this.options.virtualModels.applyConfigDefinitions(settings.virtualModels);
    await this.options.failoverRules.applyConfigDefinitions(settings.failoverRules);
    await this.options.mcp?.registry.applyConfig(settings.mcp.servers, settings.mcp.virtualServers);
    const applied = appliedSections.filter((section) => section !== 'providers' || this.options.providers !== undefined);
    // Against the start-up settings, not the last reload's: a pending restart stays listed until one happens.
    const outcome = { applied, restart_needed: changedOtherwise(this.startedWith, settings) };
    this.settings = settings;
    logger.info(outcome, 'configuration reloaded');
    return outcome;
  }
}

function refuseProviderChanges(current: Settings, next: Settings): void {
  if (JSON.stringify(current.providers) !== JSON.stringify(next.providers)) {
    throw new ConfigError('providers', 'provider changes are not applied by a reload; restart the gateway to apply them');
  }
}

function refusalOf(error: unknown): GatewayError {
  if (error instanceof ConfigError) return invalidRequest(error.message, { code: 'invalid_config', param: error.key });
  throw error;
}

/** Top-level sections whose other values changed: they take effect after a restart. */
function changedOtherwise(current: Settings, next: Settings): string[] {
  const before = withoutApplied(current);
  const after = withoutApplied(next);
  return Object.keys(after).filter((key) => JSON.stringify(before[key]) !== JSON.stringify(after[key]));
}

function withoutApplied(settings: Settings): Record<string, unknown> {
  return {
    ...settings,
    providers: [],
    disabledProviders: [],
    pricing: {},
    rateLimits: { ...settings.rateLimits, rules: [] },
    budgets: { ...settings.budgets, rules: [] },
    mcp: { ...settings.mcp, servers: [], virtualServers: [] },
    virtualModels: [],
    failoverRules: [],
    guardrails: [],
    configFile: null,
  };
}
