import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { VirtualModelValidationError } from '../routing/virtual-model-validation.ts';
import { ConfigError } from '../errors/config-error.ts';
import { loadSettings } from './load.ts';
import { buildVirtualModels, parseVirtualModelInput } from './virtual-models.ts';
import { thrown } from '../testing/thrown.ts';

const instances = ['openai', 'openai-east', 'anthropic'];

const build = (yaml: unknown, env: Record<string, string> = {}) => buildVirtualModels(yaml, env, instances);
const yamlError = (entry: Record<string, unknown>) => thrown(ConfigError, () => build([entry]));
const valid = { name: 'fast', targets: [{ model: 'gpt-4o-mini' }] };

describe('buildVirtualModels', () => {
  it('is empty without declarations', () => {
    expect(build(undefined)).toEqual([]);
    expect(build(null, { VIRTUAL_MODELS: '  ' })).toEqual([]);
  });

  it('reads YAML entries with defaults for strategy, weight and description', () => {
    const yaml = [
      {
        name: 'fast',
        targets: [{ provider: 'openai-east', model: 'gpt-4o-mini', weight: 3 }, { model: 'claude-3-5-haiku' }],
      },
      { name: 'team/smart', targets: [{ provider: 'anthropic', model: 'claude-sonnet-4' }], strategy: 'failover', description: 'Smart' },
      { name: 'busy', targets: [{ model: 'm' }], strategy: 'least_busy' },
    ];
    expect(build(yaml)).toEqual([
      {
        name: 'fast',
        targets: [
          { provider: 'openai-east', model: 'gpt-4o-mini', weight: 3 },
          { model: 'claude-3-5-haiku', weight: 1 },
        ],
        strategy: 'round_robin',
        description: '',
      },
      {
        name: 'team/smart',
        targets: [{ provider: 'anthropic', model: 'claude-sonnet-4', weight: 1 }],
        strategy: 'failover',
        description: 'Smart',
      },
      { name: 'busy', targets: [{ model: 'm', weight: 1 }], strategy: 'least_busy', description: '' },
    ]);
    expect(build(yaml)[0]?.targets[1]).not.toHaveProperty('provider');
  });

  it('reads the target shorthand, splitting a configured instance prefix only', () => {
    const models = build([
      { name: 'a', target: 'openai/gpt-4o' },
      { name: 'b', target: 'gpt-4o' },
      { name: 'c', target: 'meta-llama/llama-3' },
      { name: 'd', target: 'openai/' },
    ]);
    expect(models.map((model) => model.targets)).toEqual([
      [{ provider: 'openai', model: 'gpt-4o', weight: 1 }],
      [{ model: 'gpt-4o', weight: 1 }],
      [{ model: 'meta-llama/llama-3', weight: 1 }],
      [{ model: 'openai/', weight: 1 }],
    ]);
  });

  it('reads a qualified model of a target without provider as that instance', () => {
    expect(build([{ name: 'a', targets: [{ model: 'anthropic/claude' }, { model: 'x/y' }] }])[0]?.targets).toEqual([
      { provider: 'anthropic', model: 'claude', weight: 1 },
      { model: 'x/y', weight: 1 },
    ]);
  });

  it('lets a VIRTUAL_MODELS entry replace the YAML entry of the same name in place and appends new ones', () => {
    const yaml = [
      { name: 'one', target: 'a' },
      { name: 'two', target: 'b' },
    ];
    const env = {
      VIRTUAL_MODELS: JSON.stringify([
        { name: 'three', target: 'c' },
        { name: 'one', targets: [{ model: 'z', weight: 2 }], strategy: 'failover' },
      ]),
    };
    expect(build(yaml, env)).toEqual([
      { name: 'one', targets: [{ model: 'z', weight: 2 }], strategy: 'failover', description: '' },
      { name: 'two', targets: [{ model: 'b', weight: 1 }], strategy: 'round_robin', description: '' },
      { name: 'three', targets: [{ model: 'c', weight: 1 }], strategy: 'round_robin', description: '' },
    ]);
  });

  it('names the YAML key of every validation error', () => {
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [{ targets: [{ model: 'm' }] }, 'virtual_models.0.name', 'name is required'],
      [{ name: 7, target: 'm' }, 'virtual_models.0.name', 'must be a string'],
      [{ name: 'x'.repeat(201), target: 'm' }, 'virtual_models.0.name', 'at most 200'],
      [{ name: 'two words', target: 'm' }, 'virtual_models.0.name', 'whitespace'],
      [{ name: 'tab\t', target: 'm' }, 'virtual_models.0.name', 'whitespace'],
      [{ name: 'openai/fast', target: 'm' }, 'virtual_models.0.name', 'ambiguous'],
      [{ name: 'fast', target: 'm', strategy: 'random' }, 'virtual_models.0.strategy', 'round_robin, failover, least_busy'],
      [{ name: 'fast' }, 'virtual_models.0.targets', 'at least one target'],
      [{ name: 'fast', targets: [] }, 'virtual_models.0.targets', 'at least one target'],
      [{ name: 'fast', targets: 'm' }, 'virtual_models.0.targets', 'must be a list'],
      [{ name: 'fast', target: '' }, 'virtual_models.0.target', '<provider>/<model>'],
      [{ name: 'fast', target: 'm', targets: [{ model: 'm' }] }, 'virtual_models.0.target', 'not both'],
      [{ name: 'fast', targets: [{ model: 'm' }, 'n'] }, 'virtual_models.0.targets.1', 'expected an object'],
      [{ name: 'fast', targets: [{ model: 'm' }, { provider: 'openai' }] }, 'virtual_models.0.targets.1.model', 'model is required'],
      [{ name: 'fast', targets: [{ model: 'm' }, { model: 'n', weight: 0 }] }, 'virtual_models.0.targets.1.weight', 'integer from 1'],
      [{ name: 'fast', targets: [{ model: 'm', weight: 1.5 }] }, 'virtual_models.0.targets.0.weight', 'integer from 1'],
      [{ name: 'fast', targets: [{ model: 'm', weight: '2' }] }, 'virtual_models.0.targets.0.weight', 'integer from 1'],
      [
        { name: 'fast', targets: [{ model: 'm', provider: 'nope' }] },
        'virtual_models.0.targets.0.provider',
        'openai, openai-east, anthropic',
      ],
      [{ name: 'fast', targets: [{ model: 'm', provider: 3 }] }, 'virtual_models.0.targets.0.provider', 'must be a string'],
      [{ name: 'fast', targets: [{ model: 'fast' }] }, 'virtual_models.0.targets.0.model', 'itself'],
      [{ name: 'fast', target: 'fast' }, 'virtual_models.0.target', 'itself'],
      [{ name: 'fast', target: 'm', description: 5 }, 'virtual_models.0.description', 'must be a string'],
      [{ name: 'fast', target: 'm', strategey: 'failover' }, 'virtual_models.0.strategey', 'unknown field'],
      [{ name: 'fast', targets: [{ model: 'm', wieght: 2 }] }, 'virtual_models.0.targets.0.wieght', 'unknown field'],
    ];
    for (const [entry, key, message] of cases) {
      const error = yamlError(entry);
      expect({ key: error.key, message: error.message }).toEqual({ key, message: expect.stringContaining(message) });
      expect(error.message).toContain(`invalid configuration: ${key}: `);
    }
  });

  it('accepts a target on a configured instance whose model spells the virtual model name', () => {
    expect(build([{ name: 'gpt-4o', targets: [{ provider: 'openai', model: 'gpt-4o' }] }])[0]?.targets).toEqual([
      { provider: 'openai', model: 'gpt-4o', weight: 1 },
    ]);
    expect(build([{ name: 'other/fast', target: 'm' }])[0]?.name).toBe('other/fast');
  });

  it('says when no provider instance is configured', () => {
    const error = thrown(ConfigError, () => buildVirtualModels([{ name: 'a', targets: [{ provider: 'openai', model: 'm' }] }], {}, []));
    expect(error.message).toContain('none are configured');
  });

  it('refuses lists that are not lists and duplicate names in one source', () => {
    expect(thrown(ConfigError, () => build({ name: 'fast' })).key).toBe('virtual_models');
    expect(thrown(ConfigError, () => build(['fast'])).key).toBe('virtual_models.0');
    const duplicate = thrown(ConfigError, () => build([valid, { name: 'other', target: 'm' }, valid]));
    expect(duplicate.key).toBe('virtual_models.2.name');
    expect(duplicate.message).toContain('also at virtual_models.0');
    expect(build([{ name: 'Fast', target: 'm' }, valid]).map((model) => model.name)).toEqual(['Fast', 'fast']);
  });

  it('names the VIRTUAL_MODELS key of every environment error', () => {
    const env = (value: unknown) => ({ VIRTUAL_MODELS: typeof value === 'string' ? value : JSON.stringify(value) });
    expect(thrown(ConfigError, () => build(undefined, env('[{'))).key).toBe('VIRTUAL_MODELS');
    expect(thrown(ConfigError, () => build(undefined, env({ name: 'a' }))).message).toContain('expected a JSON array');
    expect(thrown(ConfigError, () => build(undefined, env([valid, { ...valid, name: 'b', strategy: 'cost' }]))).key).toBe(
      'VIRTUAL_MODELS.1.strategy',
    );
    expect(thrown(ConfigError, () => build(undefined, env([{ name: 'b', targets: [{ model: 'm', weight: -1 }] }]))).key).toBe(
      'VIRTUAL_MODELS.0.targets.0.weight',
    );
    expect(thrown(ConfigError, () => build(undefined, env([valid, valid]))).key).toBe('VIRTUAL_MODELS.1.name');
    expect(thrown(ConfigError, () => build([{ name: 'x', target: 'fast' }], env([{ name: 'fast', target: 'fast' }]))).key).toBe(
      'VIRTUAL_MODELS.0.target',
    );
  });
});

describe('parseVirtualModelInput', () => {
  it('validates one object and reports the field under the given key', () => {
    expect(parseVirtualModelInput({ name: 'fast', target: 'openai/gpt-4o' }, '', instances)).toEqual({
      name: 'fast',
      targets: [{ provider: 'openai', model: 'gpt-4o', weight: 1 }],
      strategy: 'round_robin',
      description: '',
    });
    const thrown = (() => {
      try {
        parseVirtualModelInput({ name: 'fast', targets: [{ model: 'm', weight: 0 }] }, '', instances);
      } catch (error) {
        return error;
      }
      return undefined;
    })();
    expect(thrown).toBeInstanceOf(VirtualModelValidationError);
    expect(thrown).toMatchObject({ field: 'targets.0.weight', message: expect.stringContaining('integer from 1') });
    expect(() => parseVirtualModelInput([], 'body', instances)).toThrow(expect.objectContaining({ field: 'body' }));
  });
});

describe('virtual models in loadSettings', () => {
  const load = (env: Record<string, string>, yaml: string) => {
    const cwd = mkdtempSync(join(tmpdir(), 'vm-config-'));
    writeFileSync(join(cwd, 'config.yaml'), yaml);
    return loadSettings({ argv: [], env, cwd });
  };
  const yaml = [
    'providers:',
    '  main:',
    '    type: openai-compatible',
    '    base_url: http://127.0.0.1:1234/v1',
    'virtual_models:',
    '  - name: fast',
    '    target: main/${FAST_MODEL:-small}',
    '  - name: smart',
    '    targets:',
    '      - {provider: openai, model: gpt-4o, weight: 2}',
    '      - {model: big}',
    '    strategy: failover',
  ].join('\n');

  it('validates against the registered instances, YAML and environment included, and freezes the result', () => {
    const { settings, warnings } = load({ OPENAI_API_KEY: 'k', VIRTUAL_MODELS: '[{"name": "cheap", "target": "main/tiny"}]' }, yaml);
    expect(warnings).toEqual([]);
    expect(settings.virtualModels).toEqual([
      { name: 'fast', targets: [{ provider: 'main', model: 'small', weight: 1 }], strategy: 'round_robin', description: '' },
      {
        name: 'smart',
        targets: [
          { provider: 'openai', model: 'gpt-4o', weight: 2 },
          { model: 'big', weight: 1 },
        ],
        strategy: 'failover',
        description: '',
      },
      { name: 'cheap', targets: [{ provider: 'main', model: 'tiny', weight: 1 }], strategy: 'round_robin', description: '' },
    ]);
    expect(Object.isFrozen(settings.virtualModels[0]?.targets)).toBe(true);
    expect(load({}, 'virtual_models: []\n').settings.virtualModels).toEqual([]);
  });

  it('refuses a target on an instance that is not registered, naming the key', () => {
    const error = thrown(ConfigError, () => load({}, yaml));
    expect(error.key).toBe('virtual_models.1.targets.0.provider');
    expect(error.message).toContain('configured: main');
  });
});
