import pino from 'pino';
import { describe, expect, it } from 'vitest';

import { invalidRequest, notFound } from '../errors/gateway-error.ts';
import { StoredDefinitions, type DefinitionStore } from './stored-definitions.ts';

interface Thing {
  readonly name: string;
  readonly value: number;
}
type Row = Thing & { createdAt: number; updatedAt: number };

/** A store shared by two instances, as two replicas share one database. */
function memoryStore(): DefinitionStore<Thing> & { rows: Map<string, Row> } {
  const rows = new Map<string, Row>();
  return {
    rows,
    list: async () => [...rows.values()],
    upsert: async (row) => void rows.set(row.name, row),
    remove: async (key) => rows.delete(key),
  };
}

class Things extends StoredDefinitions<Thing> {
  readonly forgotten: string[] = [];
  protected override forget(key: string): void {
    this.forgotten.push(key);
  }
  get(name: string): Thing | undefined {
    return this.entries.get(name);
  }
}

const kind = {
  keyOf: (thing: Thing) => thing.name,
  logField: 'thing',
  noun: 'thing',
  notFound: (key: string) => notFound(`no thing ${key}`, { code: 'virtual_model_not_found' }),
  readOnly: (key: string) => invalidRequest(`${key} is read-only`, { status: 409, code: 'virtual_model_read_only' }),
};

describe('StoredDefinitions', () => {
  it('keeps configuration definitions read-only and shadowing stored ones', async () => {
    const store = memoryStore();
    store.rows.set('a', { name: 'a', value: 2, createdAt: 1, updatedAt: 1 });
    const things = new Things({ store, configDefinitions: [{ name: 'a', value: 1 }], logger: pino({ enabled: false }) }, kind);
    await things.start();
    expect(things.get('a')).toMatchObject({ value: 1, origin: 'config' });
    await expect(things.upsert({ name: 'a', value: 3 })).rejects.toMatchObject({ status: 409 });
    await expect(things.remove('a')).rejects.toMatchObject({ status: 409 });
    await expect(things.remove('b')).rejects.toMatchObject({ status: 404 });
  });

  it("applies another instance's writes and removals on reload, and forgets what was removed", async () => {
    const store = memoryStore();
    const options = { store, configDefinitions: [], logger: pino({ enabled: false }), now: () => 5 };
    const [one, two] = [new Things(options, kind), new Things(options, kind)];
    await one.start();
    await two.start();
    expect(await one.upsert({ name: 'b', value: 1 })).toMatchObject({ origin: 'manual', createdAt: 5, updatedAt: 5 });
    await two.reload();
    expect(two.get('b')).toMatchObject({ value: 1, origin: 'manual' });
    await one.remove('b');
    expect(one.forgotten).toEqual(['b']);
    await two.reload();
    expect(two.get('b')).toBeUndefined();
    expect(two.forgotten).toEqual(['b']);
    expect(two.size).toBe(0);
  });
});
