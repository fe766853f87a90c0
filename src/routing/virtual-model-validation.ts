import {
  virtualModelStrategies,
  type VirtualModelDefinition,
  type VirtualModelStrategy,
  type VirtualModelTarget,
} from './virtual-model.ts';

/** A virtual model declaration that cannot be accepted; `field` is the full key, e.g. `virtual_models.0.targets.1.weight`. */
export class VirtualModelValidationError extends Error {
  readonly field: string;

  constructor(field: string, message: string) {
    super(message);
    this.name = 'VirtualModelValidationError';
    this.field = field;
  }
}

export const virtualModelNameMaxLength = 200;
export const virtualModelWeightMax = 1_000_000;

const allowedFields = new Set(['name', 'targets', 'target', 'strategy', 'description']);
const allowedTargetFields = new Set(['provider', 'model', 'weight']);

/**
 * Validates one virtual model declaration, as written in YAML `virtual_models:`, the
 * `VIRTUAL_MODELS` JSON array or an admin request body:
 * `{name, targets: [{provider?, model, weight?}] | target: "<provider>/<model>" | "<model>", strategy?, description?}`.
 * `key` prefixes every error field (`''` for none). A target without `provider` whose model starts
 * with `<instance>/` is read as that instance's model, as a selector would be (CONTRACT section 2).
 */
export function parseVirtualModelInput(value: unknown, key: string, instanceNames: readonly string[]): VirtualModelDefinition {
  const input = requireRecord(value, key);
  rejectUnknownFields(input, allowedFields, key);
  const name = parseName(input['name'], fieldOf(key, 'name'), instanceNames);
  const targets = parseTargets(input, key, instanceNames);
  targets.forEach((target, index) => {
    if (target.provider === undefined && target.model === name) {
      const field = input['targets'] === undefined ? fieldOf(key, 'target') : fieldOf(key, `targets.${index}.model`);
      throw new VirtualModelValidationError(field, `a target may not name the virtual model "${name}" itself`);
    }
  });
  return {
    name,
    targets,
    strategy: parseStrategy(input['strategy'], fieldOf(key, 'strategy')),
    description: parseDescription(input['description'], fieldOf(key, 'description')),
  };
}

function parseName(value: unknown, field: string, instanceNames: readonly string[]): string {
  if (value === undefined || value === null || value === '') throw new VirtualModelValidationError(field, 'name is required');
  if (typeof value !== 'string') throw new VirtualModelValidationError(field, 'name must be a string');
  if (value.length > virtualModelNameMaxLength) {
    throw new VirtualModelValidationError(field, `name must be at most ${virtualModelNameMaxLength} characters`);
  }
  if (/[\s\p{Cc}]/u.test(value)) throw new VirtualModelValidationError(field, 'name must not contain whitespace or control characters');
  const slash = value.indexOf('/');
  const prefix = value.slice(0, slash);
  if (slash >= 0 && instanceNames.includes(prefix)) {
    throw new VirtualModelValidationError(
      field,
      `name "${value}" starts with the provider instance "${prefix}/", which would make the selector ambiguous`,
    );
  }
  return value;
}

function parseTargets(input: Record<string, unknown>, key: string, instanceNames: readonly string[]): VirtualModelTarget[] {
  const list = input['targets'];
  const shorthand = input['target'];
  if (list !== undefined && shorthand !== undefined) {
    throw new VirtualModelValidationError(fieldOf(key, 'target'), 'use either target or targets, not both');
  }
  if (shorthand !== undefined) return [parseShorthand(shorthand, fieldOf(key, 'target'), instanceNames)];
  const field = fieldOf(key, 'targets');
  if (list === undefined || list === null)
    throw new VirtualModelValidationError(field, 'at least one target is required (targets or target)');
  if (!Array.isArray(list)) throw new VirtualModelValidationError(field, 'targets must be a list');
  if (list.length === 0) throw new VirtualModelValidationError(field, 'at least one target is required');
  return list.map((item: unknown, index) => parseTarget(item, `${field}.${index}`, instanceNames));
}

function parseShorthand(value: unknown, field: string, instanceNames: readonly string[]): VirtualModelTarget {
  if (typeof value !== 'string' || value.trim() === '') {
    throw new VirtualModelValidationError(field, 'target must be "<provider>/<model>" or "<model>"');
  }
  return { ...splitSelector(value.trim(), instanceNames), weight: 1 };
}

function parseTarget(value: unknown, key: string, instanceNames: readonly string[]): VirtualModelTarget {
  const input = requireRecord(value, key);
  rejectUnknownFields(input, allowedTargetFields, key);
  const model = input['model'];
  if (typeof model !== 'string' || model.trim() === '') {
    throw new VirtualModelValidationError(fieldOf(key, 'model'), 'model is required');
  }
  const weight = parseWeight(input['weight'], fieldOf(key, 'weight'));
  const provider = input['provider'];
  if (provider === undefined || provider === null) return { ...splitSelector(model.trim(), instanceNames), weight };
  const field = fieldOf(key, 'provider');
  if (typeof provider !== 'string') throw new VirtualModelValidationError(field, 'provider must be a string');
  const instance = provider.trim();
  if (!instanceNames.includes(instance)) throw new VirtualModelValidationError(field, unknownInstanceMessage(instance, instanceNames));
  return { provider: instance, model: model.trim(), weight };
}

function splitSelector(selector: string, instanceNames: readonly string[]): { provider?: string; model: string } {
  const slash = selector.indexOf('/');
  const prefix = selector.slice(0, slash);
  const model = selector.slice(slash + 1);
  return slash > 0 && model !== '' && instanceNames.includes(prefix) ? { provider: prefix, model } : { model: selector };
}

function parseWeight(value: unknown, field: string): number {
  if (value === undefined || value === null) return 1;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > virtualModelWeightMax) {
    throw new VirtualModelValidationError(
      field,
      `weight must be an integer from 1 to ${virtualModelWeightMax}, got ${JSON.stringify(value)}`,
    );
  }
  return value;
}

function parseStrategy(value: unknown, field: string): VirtualModelStrategy {
  if (value === undefined || value === null) return 'round_robin';
  const strategy = virtualModelStrategies.find((candidate) => candidate === value);
  if (strategy === undefined) {
    throw new VirtualModelValidationError(
      field,
      `strategy must be one of ${virtualModelStrategies.join(', ')}, got ${JSON.stringify(value)}`,
    );
  }
  return strategy;
}

function parseDescription(value: unknown, field: string): string {
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new VirtualModelValidationError(field, 'description must be a string');
  return value;
}

function unknownInstanceMessage(instance: string, instanceNames: readonly string[]): string {
  const known = instanceNames.length === 0 ? 'none are configured' : `configured: ${instanceNames.join(', ')}`;
  return `unknown provider instance "${instance}" (${known})`;
}

function requireRecord(value: unknown, field: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new VirtualModelValidationError(field, 'expected an object');
  }
  return value as Record<string, unknown>;
}

function rejectUnknownFields(input: Record<string, unknown>, allowed: ReadonlySet<string>, key: string): void {
  const unknown = Object.keys(input).find((field) => !allowed.has(field));
  if (unknown !== undefined) {
    throw new VirtualModelValidationError(fieldOf(key, unknown), `unknown field (expected ${[...allowed].join(', ')})`);
  }
}

function fieldOf(key: string, field: string): string {
  return key === '' ? field : `${key}.${field}`;
}
