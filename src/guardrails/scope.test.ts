import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { buildGuardrails } from './guardrail-settings.ts';
import { Guardrails } from './pipeline.ts';

// Issue 27 item 15: a guardrail's user paths cover requests by the rule of rate limits and
// budgets (core/user-path.ts userPathCovers): the path and its descendants, case-insensitively.

describe('guardrail scope', () => {
  it('covers user paths case-insensitively, descendants included, not sibling prefixes', () => {
    const guardrails = Guardrails.open(pino({ level: 'silent' }));
    const settings = buildGuardrails([{ name: 'g', type: 'deny_list', terms: ['falcon'], applies_to: { user_paths: ['/Team'] } }]);
    guardrails.replace(settings, new Map());
    const select = (userPath: string) => guardrails.select(userPath, 'm', '/v1/chat/completions', { requestId: 'r' });
    for (const path of ['/team', '/TEAM', '/team/app', '/TEAM/App/x']) expect(select(path), path).not.toBeNull();
    for (const path of ['/team-alpha', '/teams', '/', '/other/team']) expect(select(path), path).toBeNull();
  });
});
