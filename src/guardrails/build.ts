import { countTokens, loadTokenCounter } from '../core/tokenizer.ts';
import type { GuardrailSettings } from './guardrail-settings.ts';
import type { ProviderAdapter } from '../providers/provider.ts';
import { moderationCheck } from './moderation.ts';
import { compileDenyList } from './deny-list.ts';
import { chatTexts } from './chat-texts.ts';
import { piiFinder } from './pii.ts';
import { findSecrets } from './secrets.ts';
import type { Guardrail, Span } from './types.ts';
import { webhookCheck } from './webhook.ts';

/** Stream text held back for a possible match; matches longer than this may be cut (README). */
const defaultHoldBack = 256;

/** Finders of `custom` guardrails, by module path (loaded by custom.ts). */
export type CustomFinders = ReadonlyMap<string, (text: string) => Span[]>;

/** Provider instances by name, for `moderation`. */
export type Instances = ReadonlyMap<string, ProviderAdapter>;

/** The guardrail a configuration entry describes. */
export function buildGuardrail(
  settings: GuardrailSettings,
  custom: CustomFinders = new Map(),
  instances: Instances = new Map(),
): Guardrail {
  const base = { name: settings.name, type: settings.type, mode: settings.mode, scope: settings.scope };
  if (settings.type === 'max_input_tokens') {
    const limit = settings.maxTokens;
    void loadTokenCounter(); // at start-up, not on the first request
    return {
      ...base,
      kind: 'request',
      check: async (body) => ((await countTokens(chatTexts(body), limit)) > limit ? `more than ${limit} input tokens` : null),
    };
  }
  if (settings.type === 'json_schema') return { ...base, kind: 'schema' };
  if (settings.type === 'moderation') {
    const adapter = instances.get(settings.provider);
    if (adapter === undefined)
      throw new Error(`guardrail "${settings.name}": provider "${settings.provider}" is not a configured instance`);
    return { ...base, kind: 'request', check: moderationCheck(adapter, settings) };
  }
  if (settings.type === 'webhook') return { ...base, kind: 'request', check: webhookCheck(settings.name, settings) };
  const denyList = settings.type === 'deny_list' ? compileDenyList(settings.terms, settings.patterns) : null;
  const find = settings.type === 'custom' ? custom.get(settings.module) : (denyList?.find ?? finderOf(settings));
  if (find === undefined) throw new Error(`guardrail "${settings.name}": its module is not loaded`);
  const { action, input, output } = settings;
  return {
    ...base,
    kind: 'text',
    action,
    input,
    output,
    holdBack: defaultHoldBack,
    find,
    ...(denyList === null ? {} : { findAsync: denyList.findAsync }),
    replacement: replacementOf(settings.replacement),
  };
}

/** Entities whose replacement is remembered; a custom finder may name any number of them. */
const rememberedEntities = 64;

/** The replacement text of an entity: `template` with `<ENTITY>` its name in capitals, built once. */
function replacementOf(template: string): (entity: string) => string {
  const built = new Map<string, string>();
  return (entity) => {
    let text = built.get(entity);
    if (text === undefined) {
      text = template.replaceAll('<ENTITY>', entity.toUpperCase());
      if (built.size < rememberedEntities) built.set(entity, text);
    }
    return text;
  };
}

function finderOf(
  settings: Exclude<GuardrailSettings, { type: 'max_input_tokens' | 'webhook' | 'custom' | 'moderation' | 'json_schema' }>,
): ((text: string) => Span[]) | undefined {
  if (settings.type === 'pii') return piiFinder(settings.entities);
  if (settings.type === 'secrets') return findSecrets;
  return undefined;
}
