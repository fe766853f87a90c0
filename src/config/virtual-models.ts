import type { VirtualModelDefinition } from '../routing/virtual-model.ts';
import { parseVirtualModelInput, VirtualModelValidationError } from '../routing/virtual-model-validation.ts';
import { ConfigError } from '../errors/config-error.ts';

export { parseVirtualModelInput } from '../routing/virtual-model-validation.ts';

type Env = Readonly<Record<string, string | undefined>>;

/**
 * Virtual models from YAML `virtual_models:` (a list) and `VIRTUAL_MODELS` (a JSON array of the
 * same objects). An environment entry replaces the YAML entry of the same name in place; new ones
 * follow in their order. `instanceNames` are the registered provider instances.
 */
export function buildVirtualModels(yamlValue: unknown, env: Env, instanceNames: readonly string[]): VirtualModelDefinition[] {
  const fromYaml = declarations(listOf(yamlValue, 'virtual_models'), 'virtual_models', instanceNames);
  const raw = env['VIRTUAL_MODELS']?.trim();
  const fromEnv = raw ? declarations(parseEnvList(raw), 'VIRTUAL_MODELS', instanceNames) : [];
  const byName = new Map<string, VirtualModelDefinition>();
  for (const definition of [...fromYaml, ...fromEnv]) byName.set(definition.name, definition);
  return [...byName.values()];
}

function declarations(items: readonly unknown[], key: string, instanceNames: readonly string[]): VirtualModelDefinition[] {
  const seen = new Map<string, string>();
  return items.map((item, index) => {
    const itemKey = `${key}.${index}`;
    const definition = toConfigError(() => parseVirtualModelInput(item, itemKey, instanceNames));
    const earlier = seen.get(definition.name);
    if (earlier !== undefined) {
      throw new ConfigError(`${itemKey}.name`, `duplicate virtual model name "${definition.name}" (also at ${earlier})`);
    }
    seen.set(definition.name, itemKey);
    return definition;
  });
}

function listOf(value: unknown, key: string): readonly unknown[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new ConfigError(key, 'expected a list');
  return value;
}

function parseEnvList(raw: string): readonly unknown[] {
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw new ConfigError('VIRTUAL_MODELS', `not valid JSON: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!Array.isArray(parsed)) throw new ConfigError('VIRTUAL_MODELS', 'expected a JSON array of virtual models');
  return parsed;
}

function toConfigError<Result>(action: () => Result): Result {
  try {
    return action();
  } catch (error) {
    if (error instanceof VirtualModelValidationError) throw new ConfigError(error.field, error.message);
    throw error;
  }
}
