import type { Logger } from 'pino';
import { ConfigError } from '../errors/config-error.ts';
import { parseGuardrail, type GuardrailSettings } from './guardrail-settings.ts';
import { invalidRequest, notFound } from '../errors/gateway-error.ts';
import { StoredDefinitions, type DefinitionKind, type DefinitionStore, type Stamped } from '../core/stored-definitions.ts';
import { buildGuardrail, type CustomFinders, type Instances } from './build.ts';
import { loadCustomFinders } from './custom.ts';
import type { GuardrailStore } from './guardrail-store.ts';
import { Guardrails, type DecisionCounter } from './pipeline.ts';

/** A guardrail as StoredDefinitions keeps it: its name and its parsed settings. */
export interface GuardrailDefinition {
  readonly name: string;
  readonly settings: GuardrailSettings;
}

export type StoredGuardrail = GuardrailDefinition & Stamped;

export interface StoredGuardrailsOptions {
  store: GuardrailStore;
  configGuardrails: readonly GuardrailSettings[];
  logger: Logger;
  metrics?: DecisionCounter | null;
  /** Provider instances by name, for `moderation`. */
  instances?: Instances;
  now?: () => number;
  /** How often stored guardrails are re-read (changes made through another replica); never when absent. */
  reloadIntervalMs?: number;
}

/**
 * Guardrails from configuration (read-only, first, in declaration order) and from the admin API
 * (stored, after them, by name). Every change (a write here, a change another replica made, a
 * hot reload) rebuilds the pipeline in one step; a request keeps the list it started with.
 */
export class StoredGuardrails extends StoredDefinitions<GuardrailDefinition> {
  /** What the model endpoints run. */
  readonly pipeline: Guardrails;
  private readonly instances: Instances;
  private configSettings: readonly GuardrailSettings[];
  private custom: CustomFinders = new Map();
  /** Names, origins and update times of the list the pipeline was built from. */
  private built = '';

  constructor(options: StoredGuardrailsOptions) {
    const { configGuardrails, store, logger } = options;
    const instances = options.instances ?? new Map<string, never>();
    super(
      {
        store: parsingStore(store, instances, logger),
        configDefinitions: configGuardrails.map(definitionOf),
        logger,
        ...(options.now === undefined ? {} : { now: options.now }),
        ...(options.reloadIntervalMs === undefined ? {} : { reloadIntervalMs: options.reloadIntervalMs }),
      },
      guardrailKind,
    );
    this.instances = instances;
    this.configSettings = configGuardrails;
    this.pipeline = Guardrails.open(logger, options.metrics ?? null, instances);
  }

  /** Loads `custom` modules (a failure stops start-up), reads the store, builds the pipeline. */
  override async start(): Promise<void> {
    this.custom = await loadCustomFinders(this.configSettings);
    await super.start();
    this.rebuild();
  }

  protected override reloaded(): void {
    this.rebuild();
  }

  /**
   * Hot reload of the YAML guardrails: their modules are loaded and each is built before
   * anything changes, so a bad entry refuses the reload (ConfigError) and the old list stays.
   */
  override async applyConfigDefinitions(definitions: readonly GuardrailDefinition[]): Promise<void> {
    const settings = definitions.map((definition) => definition.settings);
    let custom: CustomFinders;
    try {
      custom = await loadCustomFinders(settings);
      for (const entry of settings) buildGuardrail(entry, custom, this.instances);
    } catch (error) {
      throw new ConfigError('guardrails', error instanceof Error ? error.message : String(error));
    }
    this.custom = custom;
    this.configSettings = settings;
    await super.applyConfigDefinitions(definitions);
    this.rebuild();
  }

  /** Validates an admin API body (same schema as YAML) and stores it; 400 naming the field. */
  async put(body: Record<string, unknown>): Promise<StoredGuardrail> {
    const settings = parseGuardrailBody(body, this.instances);
    const entry = await this.upsert({ name: settings.name, settings });
    this.rebuild();
    return entry;
  }

  async delete(name: string): Promise<void> {
    await this.remove(name);
    this.rebuild();
  }

  find(name: string): StoredGuardrail | undefined {
    return this.entries.get(name);
  }

  /** In evaluation order: configuration ones as declared, then stored ones by name (byte order). */
  list(): StoredGuardrail[] {
    const config = this.configSettings.flatMap(({ name }) => {
      const entry = this.entries.get(name);
      return entry?.origin === 'config' ? [entry] : [];
    });
    const stored = [...this.entries.values()]
      .filter((entry) => entry.origin === 'manual')
      .sort((left, right) => (left.name < right.name ? -1 : left.name > right.name ? 1 : 0));
    return [...config, ...stored];
  }

  /** Swaps the pipeline's list when the definitions changed since it was built. */
  private rebuild(): void {
    const list = this.list();
    const signature = list.map((entry) => `${entry.origin}:${entry.name}:${entry.updatedAt}`).join('\n');
    if (signature === this.built) return;
    this.pipeline.replace(
      list.map((entry) => entry.settings),
      this.custom,
    );
    this.built = signature;
  }
}

function definitionOf(settings: GuardrailSettings): GuardrailDefinition {
  return { name: settings.name, settings };
}

/**
 * A PUT body as a guardrail: the YAML schema (a ConfigError names the field). `custom` is
 * refused (it would load code named by an API caller), and so is a `moderation` provider that
 * is not a configured instance.
 */
export function parseGuardrailBody(body: Record<string, unknown>, instances: Instances): GuardrailSettings {
  if (body['type'] === 'custom') throw new ConfigError('type', 'custom guardrails load code: declare them in the configuration file');
  const settings = parseGuardrail(body, '', null);
  if (settings.type === 'moderation' && !instances.has(settings.provider))
    throw new ConfigError('provider', `"${settings.provider}" is not a configured provider instance`);
  return settings;
}

/** The store as StoredDefinitions reads it: rows parsed again; a row no longer valid is skipped with a warning. */
function parsingStore(store: GuardrailStore, instances: Instances, logger: Logger): DefinitionStore<GuardrailDefinition> {
  return {
    async list() {
      const rows = await store.list();
      return rows.flatMap((row) => {
        try {
          const settings = parseGuardrailBody({ ...row.spec, name: row.name }, instances);
          return [{ name: row.name, settings, createdAt: row.createdAt, updatedAt: row.updatedAt }];
        } catch (error) {
          logger.warn({ guardrail: row.name, err: error }, 'a stored guardrail is no longer valid and is skipped');
          return [];
        }
      });
    },
    upsert: (row) => store.upsert({ name: row.name, spec: row.settings.entry, createdAt: row.createdAt, updatedAt: row.updatedAt }),
    remove: (name) => store.remove(name),
  };
}

const guardrailKind: DefinitionKind<GuardrailDefinition> = {
  keyOf: (definition) => definition.name,
  logField: 'guardrail',
  noun: 'guardrail',
  notFound: (name) => notFound(`no guardrail named ${name}`, { code: 'guardrail_not_found', param: 'name' }),
  readOnly: (name) =>
    invalidRequest(`the guardrail ${name} comes from configuration and is read-only`, {
      status: 409,
      code: 'guardrail_read_only',
      param: 'name',
    }),
};
