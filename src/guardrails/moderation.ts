import type { ChatRequestBody, ProviderAdapter } from '../providers/provider.ts';
import { chatTexts } from './chat-texts.ts';

export interface ModerationOptions {
  /** The configured provider instance whose `/moderations` judges the input. */
  provider: string;
  model: string;
  /** Only these categories block; empty: every flagged answer blocks. */
  categories: readonly string[];
  timeoutMs: number;
  /** When the check cannot be made (network, timeout, non-2xx): pass (true) or block (false). */
  failOpen: boolean;
}

interface ModerationAnswer {
  results?: Array<{ flagged?: unknown; categories?: Record<string, unknown> }>;
}

/** The input's texts sent to an instance's `POST /moderations`; the reason to block, or null. */
export function moderationCheck(adapter: ProviderAdapter, options: ModerationOptions): (body: ChatRequestBody) => Promise<string | null> {
  return async (body) => {
    const input = [...chatTexts(body)];
    if (input.length === 0) return null;
    let answer: ModerationAnswer;
    try {
      const response = await adapter.forward(
        {
          method: 'POST',
          path: 'moderations',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ model: options.model, input }),
          model: options.model,
        },
        { signal: AbortSignal.timeout(options.timeoutMs), requestId: 'guardrail-moderation' },
      );
      const text = await response.body.text();
      if (response.statusCode < 200 || response.statusCode > 299) throw new Error(`status ${response.statusCode}`);
      answer = JSON.parse(text) as ModerationAnswer;
    } catch {
      return options.failOpen ? null : 'the moderation check could not be made (fail_open is off)';
    }
    const flagged = new Set<string>();
    for (const result of answer.results ?? []) {
      if (result.flagged !== true) continue;
      const categories = Object.entries(result.categories ?? {})
        .filter(([, value]) => value === true)
        .map(([name]) => name);
      for (const category of categories.length === 0 ? ['flagged'] : categories) flagged.add(category);
    }
    const blocking =
      options.categories.length === 0 ? [...flagged] : [...flagged].filter((category) => options.categories.includes(category));
    return blocking.length === 0 ? null : `flagged by moderation (${blocking.join(', ')})`;
  };
}
