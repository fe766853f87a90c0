import type { Span } from './types.ts';

/** Common credential formats; each starts with a literal prefix and has bounded quantifiers. */
const secretPatterns: ReadonlyArray<readonly [entity: string, pattern: RegExp]> = [
  ['anthropic_key', /\bsk-ant-[A-Za-z0-9_-]{20,200}/g],
  ['openai_key', /\bsk-(?!ant-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,200}/g],
  ['aws_access_key', /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g],
  ['github_token', /\b(?:gh[pousr]_[A-Za-z0-9]{36,251}|github_pat_[A-Za-z0-9_]{22,255})/g],
  ['slack_token', /\bxox[abposr]-[A-Za-z0-9-]{10,200}/g],
  ['google_api_key', /\bAIza[0-9A-Za-z_-]{35}/g],
  [
    'private_key',
    /-----BEGIN (?:[A-Z0-9]{1,12} ){0,3}PRIVATE KEY(?: BLOCK)?-----[A-Za-z0-9+/=\s:,]{0,16384}(?:-----END (?:[A-Z0-9]{1,12} ){0,3}PRIVATE KEY(?: BLOCK)?-----)?/g,
  ],
];

export const secretEntities = secretPatterns.map(([entity]) => entity);

export function findSecrets(text: string): Span[] {
  const spans: Span[] = [];
  for (const [entity, pattern] of secretPatterns) {
    pattern.lastIndex = 0;
    for (let match = pattern.exec(text); match !== null; match = pattern.exec(text))
      spans.push({ start: match.index, end: match.index + match[0].length, entity });
  }
  return spans;
}
