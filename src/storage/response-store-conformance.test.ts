import { describe, expect, it } from 'vitest';
import type { StoredResponse } from '../responses/response-store.ts';
import { baseTime, useFreshStorage } from './testing/fixtures.ts';
import { defaultTestDatabaseUrl, storageBackends } from './testing/storage-backends.ts';

const backends = storageBackends(process.env.DATABASE_URL_TEST ?? defaultTestDatabaseUrl);
const day = 86_400_000;

function stored(id: string, overrides: Partial<StoredResponse> = {}): StoredResponse {
  return {
    id,
    userPath: '/Team/App',
    previousResponseId: null,
    provider: 'anthropic',
    model: 'claude-x',
    response: { id, object: 'response', store: true, metadata: { note: 'é ✓' } },
    input: [{ id: `msg_in_${id}`, type: 'message', role: 'user', content: [{ type: 'input_text', text: `question ${id}` }] }],
    output: [
      { id: `msg_out_${id}`, type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `answer ${id}` }] },
      { id: `fc_${id}`, type: 'function_call', call_id: `call_${id}`, name: 'lookup', arguments: '{}' },
    ],
    createdAt: baseTime,
    expiresAt: baseTime + day,
    ...overrides,
  };
}

describe.each(backends)('ResponseStore conformance: $name', (backend) => {
  const fresh = useFreshStorage(backend);

  it('returns a stored response exactly as inserted, items in order', async () => {
    const { responses } = fresh().storage;
    const response = stored('resp_1');
    await responses.insert(response);
    expect(await responses.chain('resp_1', baseTime + 1, 1)).toEqual([response]);
  });

  it('knows nothing of an unknown id', async () => {
    const { responses } = fresh().storage;
    await responses.insert(stored('resp_1'));
    expect(await responses.chain('resp_other', baseTime, 10)).toEqual([]);
    expect(await responses.findItems(['msg_unknown'], baseTime)).toEqual([]);
    expect(await responses.findItems([], baseTime)).toEqual([]);
  });

  it('walks previous_response_id newest first, bounded by depth, ending at a missing link', async () => {
    const { responses } = fresh().storage;
    await responses.insert(stored('resp_a', { previousResponseId: 'resp_gone' }));
    await responses.insert(stored('resp_b', { previousResponseId: 'resp_a', createdAt: baseTime + 1 }));
    await responses.insert(stored('resp_c', { previousResponseId: 'resp_b', createdAt: baseTime + 2 }));
    const ids = async (depth: number): Promise<string[]> => (await responses.chain('resp_c', baseTime + 5, depth)).map((r) => r.id);
    expect(await ids(10)).toEqual(['resp_c', 'resp_b', 'resp_a']);
    expect(await ids(2)).toEqual(['resp_c', 'resp_b']);
    const chain = await responses.chain('resp_c', baseTime + 5, 10);
    expect(chain[1]?.output[0]).toEqual(stored('resp_b').output[0]);
  });

  it('finds input and output items by id, with their response and owner', async () => {
    const { responses } = fresh().storage;
    await responses.insert(stored('resp_1'));
    await responses.insert(stored('resp_2', { userPath: '/other' }));
    const matches = await responses.findItems(['msg_out_resp_1', 'msg_in_resp_2', 'fc_resp_1'], baseTime);
    const summary = matches.map((match) => [match.item['id'], match.kind, match.responseId, match.userPath]);
    expect(summary.sort()).toEqual([
      ['fc_resp_1', 'output', 'resp_1', '/Team/App'],
      ['msg_in_resp_2', 'input', 'resp_2', '/other'],
      ['msg_out_resp_1', 'output', 'resp_1', '/Team/App'],
    ]);
    expect(matches.find((match) => match.item['id'] === 'msg_out_resp_1')?.item).toEqual(stored('resp_1').output[0]);
  });

  it('hides an expired response and its items before any sweep, also as a chain link', async () => {
    const { responses } = fresh().storage;
    await responses.insert(stored('resp_old', { expiresAt: baseTime + 10 }));
    await responses.insert(stored('resp_new', { previousResponseId: 'resp_old', expiresAt: baseTime + day }));
    expect(await responses.chain('resp_old', baseTime + 9, 5)).toHaveLength(1);
    expect(await responses.chain('resp_old', baseTime + 10, 5)).toEqual([]);
    expect((await responses.chain('resp_new', baseTime + 10, 5)).map((r) => r.id)).toEqual(['resp_new']);
    expect(await responses.findItems(['msg_out_resp_old'], baseTime + 10)).toEqual([]);
  });

  it('deletes a response and its items; a second delete finds nothing', async () => {
    const { responses } = fresh().storage;
    await responses.insert(stored('resp_1'));
    await responses.insert(stored('resp_2'));
    expect(await responses.delete('resp_1')).toBe(true);
    expect(await responses.delete('resp_1')).toBe(false);
    expect(await responses.chain('resp_1', baseTime, 1)).toEqual([]);
    expect(await responses.findItems(['msg_out_resp_1', 'msg_out_resp_2'], baseTime)).toHaveLength(1);
  });

  it('sweeps expired rows in bounded batches and keeps live ones', async () => {
    const { responses } = fresh().storage;
    for (let index = 0; index < 3; index += 1) await responses.insert(stored(`resp_old_${index}`, { expiresAt: baseTime + 10 }));
    await responses.insert(stored('resp_live'));
    // 3 responses + 9 items expired; 2 of each per batch.
    expect(await responses.deleteExpired(baseTime + 10, 2)).toBe(4);
    expect(await responses.deleteExpired(baseTime + 10, 2)).toBe(3);
    let removed = await responses.deleteExpired(baseTime + 10, 2);
    while (removed > 0) removed = await responses.deleteExpired(baseTime + 10, 2);
    expect(await responses.chain('resp_live', baseTime + 10, 1)).toEqual([stored('resp_live')]);
    expect(await responses.chain('resp_old_0', baseTime, 1)).toEqual([]);
    expect(await responses.findItems(['msg_in_resp_old_1'], 0)).toEqual([]);
  });

  it('stores a response with no items', async () => {
    const { responses } = fresh().storage;
    const empty = stored('resp_empty', { input: [], output: [] });
    await responses.insert(empty);
    expect(await responses.chain('resp_empty', baseTime, 1)).toEqual([empty]);
  });

  it('keeps one pointer per native response id, replaced by a later one, until it expires or is deleted', async () => {
    const { responses } = fresh().storage;
    const pointer = { id: 'resp_native', instance: 'openai', userPath: '/team', createdAt: baseTime, expiresAt: baseTime + day };
    await responses.insertPointer(pointer);
    expect(await responses.pointer('resp_native', baseTime)).toEqual(pointer);
    await responses.insertPointer({ ...pointer, instance: 'openai-2' });
    expect((await responses.pointer('resp_native', baseTime))?.instance).toBe('openai-2');
    expect(await responses.pointer('resp_native', baseTime + day)).toBeNull();
    expect(await responses.pointer('resp_other', baseTime)).toBeNull();
    expect(await responses.deleteExpired(baseTime + day, 10)).toBe(1);
    await responses.insertPointer(pointer);
    await responses.deletePointer('resp_native');
    expect(await responses.pointer('resp_native', baseTime)).toBeNull();
  });
});
