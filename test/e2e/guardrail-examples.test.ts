import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';

import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { bearer, parseJson, rawRequest } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { chatRequests } from '../support/upstream.ts';

// Issue 27 item 16: every guardrail example of the README and docs/ starts the gateway and
// carries requests (a YAML deny_list once answered 500 to each). Item 15: scope user paths
// match case-insensitively. The examples are read from the documents, not copied here.

const root = resolve(import.meta.dirname, '../..');
const secretKey = `sk-proj-${'Q7'.repeat(20)}`;

type Entry = Record<string, unknown> & { name: string; type: string };

/** Every fenced YAML block of README.md and docs/ (recursively) with a `guardrails:` list. */
function guardrailExamples(): Array<{ source: string; entries: Entry[] }> {
  const files = [join(root, 'README.md'), ...markdownUnder(join(root, 'docs'))];
  const examples: Array<{ source: string; entries: Entry[] }> = [];
  for (const file of files) {
    const blocks = readFileSync(file, 'utf8').matchAll(/```ya?ml\n([\s\S]*?)```/g);
    for (const [, block] of blocks) {
      if (block === undefined || !/^guardrails:/m.test(block)) continue;
      const parsed = parse(block) as { guardrails?: Entry[] };
      if (Array.isArray(parsed.guardrails)) examples.push({ source: file.slice(root.length + 1), entries: parsed.guardrails });
    }
  }
  return examples;
}

function markdownUnder(folder: string): string[] {
  return readdirSync(folder, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? markdownUnder(join(folder, entry.name)) : entry.name.endsWith('.md') ? [join(folder, entry.name)] : [],
  );
}

/** A text the entry acts on, or null when none is derived from its settings (it still carries requests). */
function triggerOf(entry: Entry): string | null {
  const entities = entry['entities'] as string[] | undefined;
  const terms = entry['terms'] as string[] | string | undefined;
  switch (entry.type) {
    case 'pii':
      return entities === undefined || entities.includes('email') ? 'mail jane.doe@example.com please' : 'card 4111 1111 1111 1111';
    case 'secrets':
      return `key ${secretKey}`;
    case 'deny_list':
      return terms === undefined ? null : `about ${Array.isArray(terms) ? terms[0] : terms}`;
    case 'max_input_tokens':
      return 'word '.repeat(Number(entry['max_tokens']) + 10);
    case 'webhook':
      return 'BLOCK-ME please';
    case 'moderation':
      return 'an attack plan';
    case 'custom':
      return 'employee EMP-004211';
    default:
      return null;
  }
}

/** The example as the gateway loads it: the hook pointed at the mock, a module path made absolute. */
function loadable(entry: Entry, mock: MockUpstream): Entry {
  if (entry.type === 'webhook') return { ...entry, url: `${mock.url}/guardrail-hook` };
  if (entry.type === 'custom') return { ...entry, module: resolve(root, String(entry['module'])) };
  return entry;
}

const examples = guardrailExamples();

describe('guardrail examples of the README and docs/', () => {
  it('finds the example of docs/guardrails.md, with a deny_list pattern', () => {
    const readme = examples.filter((example) => example.source === 'docs/guardrails.md').flatMap((example) => example.entries);
    expect(readme.some((entry) => entry.type === 'deny_list' && Array.isArray(entry['patterns']))).toBe(true);
  });

  describe.each(examples.map((example, index) => [`${example.source} #${index + 1}`, example] as const))('%s', (_label, example) => {
    let mock: MockUpstream;
    let gateway: GatewayProcess;
    const models = new Set(['mock-model']);
    for (const entry of example.entries) for (const model of scopeOf(entry).models) models.add(model.replace(/^openai\//, ''));

    beforeAll(async () => {
      mock = await startMockUpstream({ models: [...models] });
      mock.route('POST', '/guardrail-hook', (request, response) => {
        const block = request.rawBody.includes('BLOCK-ME');
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify(block ? { action: 'block', reason: 'policy' } : { action: 'pass' }));
      });
      mock.route('POST', '/moderations', (request, response) => {
        const flagged = request.rawBody.includes('attack plan');
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end(JSON.stringify({ id: 'modr-1', results: [{ flagged, categories: { violence: flagged, hate: flagged } }] }));
      });
      const entries = example.entries.map((entry) => loadable(entry, mock));
      gateway = await startGateway({
        env: gatewayEnv(mock, { GUARDRAIL_HOOK_SECRET: 'hook-secret', UPSTREAM_RETRIES: '0' }),
        configYaml: JSON.stringify({ guardrails: entries }),
      });
    }, 90_000);

    afterAll(async () => {
      await gateway?.stop();
      await mock?.close();
    });

    const send = (entry: Entry | null, content: string) => {
      const scope = entry === null ? { models: [], userPaths: [] } : scopeOf(entry);
      const model = scope.models[0] ?? 'mock-model';
      // The scope's user path in other letters: the rule of limits and budgets (case-insensitive).
      const userPath = scope.userPaths[0] === undefined ? '/someone' : `${scope.userPaths[0].toUpperCase()}/app`;
      return rawRequest(`${gateway.url}/v1/chat/completions`, {
        headers: { ...bearer(), 'x-user-path': userPath },
        body: { model, messages: [{ role: 'user', content }] },
      });
    };

    it('carries an ordinary request and a 64 KB word with no separators', async () => {
      for (const content of ['Say hello', 'a'.repeat(1 << 16)]) {
        const reply = await send(null, content);
        expect(reply.status, reply.text).toBe(200);
      }
    });

    it.each(example.entries.map((entry) => [entry.name, entry] as const))('%s acts as its example says', async (_name, entry) => {
      const trigger = triggerOf(entry);
      if (trigger === null) return;
      const before = chatRequests(mock).length;
      const reply = await send(entry, trigger);
      const mode = entry['mode'] ?? 'enforce';
      const action = entry['action'] ?? (entry.type === 'pii' ? 'redact' : 'block');
      if (mode === 'monitor') {
        expect(reply.status, reply.text).toBe(200);
        const logged = gateway.logs().some((line) => (line['guardrail'] as { guardrail?: string } | undefined)?.guardrail === entry.name);
        expect(logged, 'a "would act" log line').toBe(true);
      } else if (action === 'redact') {
        expect(reply.status, reply.text).toBe(200);
        const sent = chatRequests(mock).slice(before).at(-1)?.rawBody ?? '';
        expect(sent).toContain('[REDACTED');
      } else {
        expect(reply.status, reply.text).toBe(400);
        expect(parseJson(reply.text)['error']).toMatchObject({ code: 'guardrail_blocked' });
        expect(reply.headers['x-guardrail-blocked']).toBe(entry.name);
      }
    });
  });
});

function scopeOf(entry: Entry): { models: string[]; userPaths: string[] } {
  const appliesTo = (entry['applies_to'] ?? {}) as { models?: string[]; user_paths?: string[] };
  return { models: appliesTo.models ?? [], userPaths: appliesTo.user_paths ?? [] };
}

describe('guardrail scope', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    const configYaml = [
      'guardrails:',
      '  - name: team-terms',
      '    type: deny_list',
      '    terms: [falcon]',
      "    patterns: ['\\S+@\\S+\\.com']",
      '    applies_to: { user_paths: [/team] }',
    ].join('\n');
    gateway = await startGateway({ env: gatewayEnv(mock), configYaml });
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  const send = (userPath: string, content: string) =>
    rawRequest(`${gateway.url}/v1/chat/completions`, {
      headers: { ...bearer(), 'x-user-path': userPath },
      body: { model: 'mock-model', messages: [{ role: 'user', content }] },
    });

  it('matches user paths case-insensitively, as limits and budgets do; not a sibling prefix', async () => {
    for (const path of ['/team', '/TEAM/app', '/Team']) expect((await send(path, 'project falcon')).status, path).toBe(400);
    expect((await send('/team-alpha', 'project falcon')).status).toBe(200);
  });

  it('answers a 1 MB near miss of a YAML pattern, and blocks the match at its end', async () => {
    const word = 'a'.repeat(1 << 20);
    expect((await send('/team/app', word)).status).toBe(200);
    const blocked = await send('/team/app', `${word}@x.com`);
    expect(blocked.status, blocked.text).toBe(400);
    expect(blocked.headers['x-guardrail-blocked']).toBe('team-terms');
  }, 30_000);
});
