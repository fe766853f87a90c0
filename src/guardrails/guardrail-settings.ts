import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { normalizeUserPath } from '../core/user-path.ts';
import { unsafePattern } from './deny-list.ts';
import { patternError } from './pattern-scan.ts';
import { piiEntities, type PiiEntity } from './pii.ts';
import type { GuardrailMode, GuardrailScope } from './types.ts';
import type { WebhookOptions } from './webhook.ts';
import type { ModerationOptions } from './moderation.ts';
import { ConfigError } from '../errors/config-error.ts';

const key = 'guardrails';

const guardrailTypes = ['pii', 'secrets', 'deny_list', 'max_input_tokens', 'json_schema', 'moderation', 'webhook', 'custom'];

interface Common {
  readonly name: string;
  readonly mode: GuardrailMode;
  readonly scope: GuardrailScope;
  /** The entry as validated (defaults filled, paths normalized): what the store keeps and the admin API shows. */
  readonly entry: GuardrailEntry;
}

interface TextCommon extends Common {
  readonly action: 'redact' | 'block';
  readonly input: boolean;
  readonly output: boolean;
  /** Template with `<ENTITY>` replaced by the entity in upper case. */
  readonly replacement: string;
}

export type GuardrailSettings =
  | (TextCommon & { readonly type: 'pii'; readonly entities: readonly PiiEntity[] })
  | (TextCommon & { readonly type: 'secrets' })
  /** `module`: the absolute path of a JavaScript module exporting `find(text)` (README "Guardrails"). */
  | (TextCommon & { readonly type: 'custom'; readonly module: string })
  | (TextCommon & { readonly type: 'deny_list'; readonly terms: readonly string[]; readonly patterns: readonly string[] })
  | (Common & { readonly type: 'max_input_tokens'; readonly maxTokens: number })
  | (Common & { readonly type: 'webhook' } & WebhookOptions)
  | (Common & { readonly type: 'moderation' } & ModerationOptions)
  | (Common & { readonly type: 'json_schema' });

const list = z.union([z.array(z.string().trim().min(1)), z.string().transform((value) => [value.trim()])]).default([]);

const common = {
  name: z
    .string()
    .trim()
    .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, { error: 'expected a name of letters, digits, . _ -' }),
  mode: z.enum(['enforce', 'monitor'], { error: 'expected enforce or monitor' }).default('enforce'),
  applies_to: z
    .strictObject({ user_paths: list, models: list, endpoints: list }, { error: 'expected {user_paths, models, endpoints}' })
    .prefault({}),
};

type Side = 'input' | 'output' | 'both';

const on = z
  .union([z.enum(['input', 'output', 'both']), z.array(z.enum(['input', 'output'])).min(1)], { error: 'expected input, output or both' })
  .optional();

/** `[input, output]` reads as `both`. */
const sideOf = (value: Side | readonly ('input' | 'output')[]): Side =>
  typeof value === 'string' ? value : value.includes('input') ? (value.includes('output') ? 'both' : 'input') : 'output';

const text = (action: 'redact' | 'block', side: 'input' | 'both') => ({
  ...common,
  action: z.enum(['redact', 'block'], { error: 'expected redact or block' }).default(action),
  on: on.transform((value) => sideOf(value ?? side)),
  replacement: z.string().default('[REDACTED_<ENTITY>]'),
});

/** One entry of `guardrails:` and the body of `PUT /admin/guardrails` (GET /openapi.json states it). */
export const guardrailEntrySchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('pii'),
    ...text('redact', 'both'),
    entities: z
      .array(z.enum(piiEntities))
      .min(1)
      .default([...piiEntities]),
  }),
  z.strictObject({ type: z.literal('secrets'), ...text('block', 'both') }),
  z.strictObject({ type: z.literal('custom'), ...text('block', 'input'), module: z.string().trim().min(1) }),
  z.strictObject({ type: z.literal('deny_list'), ...text('block', 'input'), terms: list, patterns: list }),
  z.strictObject({ type: z.literal('max_input_tokens'), ...common, max_tokens: z.coerce.number().int().min(1).max(10_000_000) }),
  z.strictObject({ type: z.literal('json_schema'), ...common }),
  z.strictObject({
    type: z.literal('moderation'),
    ...common,
    provider: z.string().trim().min(1),
    model: z.string().trim().min(1).default('omni-moderation-latest'),
    categories: list,
    timeout_ms: z.coerce.number().int().min(10).max(60_000).default(5000),
    fail_open: z.union([z.boolean(), z.stringbool()]).default(false),
  }),
  z.strictObject({
    type: z.literal('webhook'),
    ...common,
    url: z.url({ protocol: /^https?$/, error: 'expected an http(s) URL' }),
    secret: z.string().min(1).optional(),
    timeout_ms: z.coerce.number().int().min(10).max(60_000).default(2000),
    retries: z.coerce.number().int().min(0).max(5).default(1),
    fail_open: z.union([z.boolean(), z.stringbool()]).default(false),
  }),
]);

/** YAML `guardrails:`, in order; unknown types, unsafe regexes and duplicate names fail start-up. */
export function buildGuardrails(value: unknown, configFile: string | null = null): GuardrailSettings[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new ConfigError(key, 'expected a list of {name, type, mode, applies_to, ...settings}');
  const names = new Set<string>();
  return value.map((item: unknown, index) => {
    const itemKey = `${key}.${index}`;
    const settings = parseGuardrail(item, itemKey, configFile);
    if (names.has(settings.name)) throw new ConfigError(`${itemKey}.name`, `a second guardrail named "${settings.name}"`);
    names.add(settings.name);
    return settings;
  });
}

/**
 * One entry of `guardrails:` (or a body of `PUT /admin/guardrails`, with `itemKey` empty: the
 * error's key is then the field itself). Throws a ConfigError naming the field.
 */
export function parseGuardrail(item: unknown, itemKey: string, configFile: string | null): GuardrailSettings {
  const keyOf = (...path: string[]): string => [itemKey, ...path].filter((part) => part !== '').join('.');
  const type = typeof item === 'object' && item !== null ? (item as { type?: unknown }).type : undefined;
  if (typeof type !== 'string' || !guardrailTypes.includes(type))
    throw new ConfigError(keyOf('type'), `expected one of ${guardrailTypes.join(', ')}`);
  const parsed = guardrailEntrySchema.safeParse(item);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const message =
      issue?.code === 'invalid_union' && issue.path.length === 0
        ? 'expected type pii, secrets, deny_list, max_input_tokens, json_schema, moderation, webhook or custom'
        : issue?.message;
    throw new ConfigError(keyOf(...(issue?.path ?? []).map(String)), message ?? 'invalid value');
  }
  return toSettings(parsed.data, itemKey, configFile);
}

/** A guardrail entry as validated: the stored and shown form (`name` first, as in YAML). */
export type GuardrailEntry = z.output<typeof guardrailEntrySchema>;

function toSettings(validated: GuardrailEntry, itemKey: string, configFile: string | null): GuardrailSettings {
  const at = (field: string): string => (itemKey === '' ? field : `${itemKey}.${field}`);
  const scope = scopeOf(validated.applies_to, at('applies_to.user_paths'));
  const { name, ...fields } = validated;
  const parsed = { name, ...fields, applies_to: { ...fields.applies_to, user_paths: [...scope.userPaths] } };
  const base = { name: parsed.name, mode: parsed.mode, scope, entry: parsed };
  if (parsed.type === 'max_input_tokens') return { ...base, type: parsed.type, maxTokens: parsed.max_tokens };
  if (parsed.type === 'json_schema') return { ...base, type: parsed.type };
  if (parsed.type === 'moderation') {
    const { provider, model, categories, timeout_ms: timeoutMs, fail_open: failOpen } = parsed;
    return { ...base, type: parsed.type, provider, model, categories, timeoutMs, failOpen };
  }
  if (parsed.type === 'webhook') {
    const { url, timeout_ms: timeoutMs, retries, fail_open: failOpen } = parsed;
    return { ...base, type: parsed.type, url, secret: parsed.secret ?? null, timeoutMs, retries, failOpen };
  }
  const textBase = {
    ...base,
    action: parsed.action,
    input: parsed.on !== 'output',
    output: parsed.on !== 'input',
    replacement: parsed.replacement,
  };
  if (parsed.type === 'pii') return { ...textBase, type: 'pii', entities: parsed.entities };
  if (parsed.type === 'secrets') return { ...textBase, type: 'secrets' };
  if (parsed.type === 'custom') {
    // Relative to the configuration file's folder, else to the working directory.
    const module = resolve(configFile === null ? '.' : dirname(configFile), parsed.module);
    if (!existsSync(module)) throw new ConfigError(at('module'), `file not found: ${module}`);
    return { ...textBase, entry: { ...parsed, module }, type: 'custom', module };
  }
  if (parsed.terms.length === 0 && parsed.patterns.length === 0) throw new ConfigError(at('terms'), 'a deny_list needs terms or patterns');
  return {
    ...textBase,
    type: 'deny_list',
    terms: parsed.terms,
    patterns: parsed.patterns.map((source, index) => checkedPattern(source, at(`patterns.${index}`))),
  };
}

/**
 * A `deny_list` pattern as its source: refused (naming the key) when RE2 cannot run it or it
 * holds nested quantifiers. It is compiled by the guardrail's build, outside the frozen
 * configuration (a compiled expression keeps mutable state).
 */
function checkedPattern(source: string, patternKey: string): string {
  const unsafe = unsafePattern(source);
  const named = JSON.stringify(source);
  if (unsafe !== null) throw new ConfigError(patternKey, `${unsafe} (they can take exponential time): ${named}`);
  const error = patternError(source);
  if (error !== null) throw new ConfigError(patternKey, `${named} is not a usable regular expression: ${error}`);
  return source;
}

function scopeOf(scope: { user_paths: string[]; models: string[]; endpoints: string[] }, pathsKey: string): GuardrailScope {
  const userPaths = scope.user_paths.map((path) => {
    try {
      return normalizeUserPath(path);
    } catch {
      throw new ConfigError(pathsKey, `not a valid user path: ${JSON.stringify(path)}`);
    }
  });
  return { userPaths, models: scope.models, endpoints: scope.endpoints };
}
