import type { Logger } from 'pino';
import { ConfigError } from '../errors/config-error.ts';
import type { LoadedSettings, Settings } from '../config/settings.ts';
import type { Service } from '../core/service.ts';
import { invalidRequest, type GatewayError } from '../errors/gateway-error.ts';

export interface ConfigReloadOptions {
  /** Reads the configuration again, as at startup (same file, same environment); throws ConfigError. */
  read: () => LoadedSettings;
  settings: Settings;
  /** The one list of services (src/services.ts): each checks, then applies, the new settings. */
  services: readonly Service<Settings>[];
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
  /** The settings the process started with: what a section needing a restart still runs on. */
  private readonly startedWith: Settings;
  private running: Promise<unknown> = Promise.resolve();

  constructor(options: ConfigReloadOptions) {
    this.options = options;
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
    const { logger, services } = this.options;
    let settings: Settings;
    try {
      const loaded = this.options.read();
      // First: every service checks (guardrail modules and entries are built) before any applies: a refusal keeps everything.
      for (const service of services) await service.checkSettings?.(loaded.settings);
      settings = loaded.settings;
      for (const warning of loaded.warnings) logger.warn(warning);
    } catch (error) {
      const refusal = refusalOf(error);
      logger.error({ err: error, param: refusal.param }, `configuration reload refused, the old configuration is kept: ${refusal.message}`);
      throw refusal;
    }
    // In list order: providers first (virtual models and failover rules may name an instance the file adds).
    for (const service of services) await service.applySettings?.(settings);
    // Against the start-up settings, not the last reload's: a pending restart stays listed until one happens.
    const outcome = { applied: [...appliedSections], restart_needed: changedOtherwise(this.startedWith, settings) };
    logger.info(outcome, 'configuration reloaded');
    return outcome;
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
