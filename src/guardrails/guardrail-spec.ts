import type { GuardrailSettings } from './guardrail-settings.ts';

/**
 * A guardrail as its YAML entry reads, every default filled in: what `GET /admin/guardrails`
 * shows and what the store keeps (parsed again by guardrails/guardrail-settings.ts when read). The webhook
 * `secret` is kept in the store only: a view shows `secret_set` instead.
 */
export function guardrailSpec(settings: GuardrailSettings, view: 'stored' | 'shown'): Record<string, unknown> {
  const { scope } = settings;
  const base = {
    name: settings.name,
    type: settings.type,
    mode: settings.mode,
    applies_to: { user_paths: [...scope.userPaths], models: [...scope.models], endpoints: [...scope.endpoints] },
  };
  switch (settings.type) {
    case 'max_input_tokens':
      return { ...base, max_tokens: settings.maxTokens };
    case 'json_schema':
      return base;
    case 'moderation': {
      const { provider, model, categories, timeoutMs, failOpen } = settings;
      return { ...base, provider, model, categories: [...categories], timeout_ms: timeoutMs, fail_open: failOpen };
    }
    case 'webhook': {
      const { url, secret, timeoutMs, retries, failOpen } = settings;
      const key = view === 'stored' ? (secret === null ? {} : { secret }) : { secret_set: secret !== null };
      return { ...base, url, ...key, timeout_ms: timeoutMs, retries, fail_open: failOpen };
    }
    default: {
      const on = settings.input && settings.output ? 'both' : settings.input ? 'input' : 'output';
      const text = { ...base, action: settings.action, on, replacement: settings.replacement };
      if (settings.type === 'pii') return { ...text, entities: [...settings.entities] };
      if (settings.type === 'custom') return { ...text, module: settings.module };
      if (settings.type === 'deny_list') return { ...text, terms: [...settings.terms], patterns: [...settings.patterns] };
      return text;
    }
  }
}
