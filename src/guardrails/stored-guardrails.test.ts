import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { buildGuardrails } from './guardrail-settings.ts';
import { ConfigError } from '../errors/config-error.ts';
import type { GuardrailRow, GuardrailStore } from './guardrail-store.ts';
import { StoredGuardrails } from './stored-guardrails.ts';

/** A GuardrailStore in memory, shared by "replicas" as a database would be. */
function memoryStore(): GuardrailStore & { rows: Map<string, GuardrailRow> } {
  const rows = new Map<string, GuardrailRow>();
  return {
    rows,
    list: async () => [...rows.values()].sort((left, right) => (left.name < right.name ? -1 : 1)),
    upsert: async (row) => {
      rows.set(row.name, { ...row, createdAt: rows.get(row.name)?.createdAt ?? row.createdAt });
    },
    remove: async (name) => rows.delete(name),
  };
}

const silent = pino({ level: 'silent' });
const body = (text: string) => ({ model: 'm', messages: [{ role: 'user', content: text }] });
const context = { requestId: 'r' };

async function started(store: GuardrailStore, yaml: unknown[] = [{ name: 'zz-config', type: 'deny_list', terms: ['alpha'] }]) {
  const guardrails = new StoredGuardrails({ store, configGuardrails: buildGuardrails(yaml), logger: silent });
  await guardrails.start();
  return guardrails;
}

describe('StoredGuardrails', () => {
  it('orders configuration guardrails first, then stored ones by name, and rebuilds the pipeline on each change', async () => {
    const guardrails = await started(memoryStore());
    await guardrails.put({ name: 'b-stored', type: 'deny_list', terms: ['beta'] });
    await guardrails.put({ name: 'a-stored', type: 'secrets', mode: 'monitor' });
    expect(guardrails.list().map((entry) => `${entry.name} ${entry.origin}`)).toEqual([
      'zz-config config',
      'a-stored manual',
      'b-stored manual',
    ]);
    const active = guardrails.pipeline.select('/', 'm', '/v1/chat/completions', context);
    await expect(active?.input(body('beta'))).rejects.toMatchObject({ code: 'guardrail_blocked' });
    await guardrails.delete('b-stored');
    const after = guardrails.pipeline.select('/', 'm', '/v1/chat/completions', context);
    await expect(after?.input(body('beta'))).resolves.toBeDefined();
    // A request that selected before the change keeps the list it started with.
    await expect(active?.input(body('beta'))).rejects.toMatchObject({ code: 'guardrail_blocked' });
  });

  it('refuses configuration names (409), custom modules and bad fields, naming the field', async () => {
    const guardrails = await started(memoryStore());
    await expect(guardrails.put({ name: 'zz-config', type: 'secrets' })).rejects.toMatchObject({
      status: 409,
      code: 'guardrail_read_only',
    });
    await expect(guardrails.delete('zz-config')).rejects.toMatchObject({ status: 409, code: 'guardrail_read_only' });
    await expect(guardrails.delete('nope')).rejects.toMatchObject({ status: 404, code: 'guardrail_not_found' });
    await expect(guardrails.put({ name: 'c', type: 'custom', module: '/tmp/x.mjs' })).rejects.toMatchObject({ key: 'type' });
    await expect(guardrails.put({ name: 'd', type: 'deny_list', patterns: ['(a|ab)*c'] })).rejects.toBeInstanceOf(ConfigError);
    await expect(guardrails.put({ name: 'p', type: 'pii', entities: ['dna'] })).rejects.toMatchObject({ key: 'entities.0' });
  });

  it('another replica picks up stored changes on reload; a stored row no longer valid is skipped', async () => {
    const store = memoryStore();
    const first = await started(store);
    const second = await started(store);
    await first.put({ name: 'shared', type: 'deny_list', terms: ['gamma'] });
    expect(second.pipeline.size).toBe(1);
    await second.reload();
    expect(second.pipeline.size).toBe(2);
    store.rows.set('broken', { name: 'broken', spec: { type: 'pii', entities: ['dna'] }, createdAt: 1, updatedAt: 1 });
    await second.reload();
    expect(second.list().map((entry) => entry.name)).toEqual(['zz-config', 'shared']);
  });

  it('hot reload swaps the configuration guardrails, or refuses and keeps them', async () => {
    const guardrails = await started(memoryStore());
    const next = buildGuardrails([{ name: 'beta', type: 'deny_list', terms: ['beta'] }]);
    await guardrails.applyConfigDefinitions(next.map((settings) => ({ name: settings.name, settings })));
    expect(guardrails.list().map((entry) => entry.name)).toEqual(['beta']);
    const missing = buildGuardrails([{ name: 'x', type: 'moderation', provider: 'nowhere' }]);
    await expect(guardrails.applyConfigDefinitions(missing.map((settings) => ({ name: settings.name, settings })))).rejects.toBeInstanceOf(
      ConfigError,
    );
    expect(guardrails.list().map((entry) => entry.name)).toEqual(['beta']);
  });

  it('stores the validated entry, which parses back to itself (the stored form is the schema output)', async () => {
    const store = memoryStore();
    const guardrails = await started(store, []);
    await guardrails.put({ name: ' p ', type: 'pii', on: ['output', 'input'], applies_to: { user_paths: ['/Team/'], models: 'gpt' } });
    await guardrails.put({ name: 'w', type: 'webhook', url: 'https://example.com/h', secret: 's3cret', retries: '0' });
    await guardrails.put({ name: 't', type: 'max_input_tokens', max_tokens: '12' });
    for (const row of store.rows.values()) {
      expect(buildGuardrails([row.spec])[0]?.entry).toEqual(row.spec);
    }
    expect(store.rows.get('p')?.spec).toEqual({
      name: 'p',
      type: 'pii',
      mode: 'enforce',
      applies_to: { user_paths: ['/Team'], models: ['gpt'], endpoints: [] },
      action: 'redact',
      on: 'both',
      replacement: '[REDACTED_<ENTITY>]',
      entities: expect.any(Array),
    });
    expect(store.rows.get('w')?.spec).toMatchObject({ secret: 's3cret', retries: 0 });
  });
});
