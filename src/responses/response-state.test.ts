import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../errors/gateway-error.ts';
import { openStorage } from '../storage/open-storage.ts';
import type { Storage } from '../storage/storage.ts';
import { rejected } from '../testing/thrown.ts';
import { normalizeInput } from './input-items.ts';
import { pageOf } from './input-items-page.ts';
import { ResponseState } from './response-state.ts';

const day = 86_400_000;
let storage: Storage;
let now = Date.UTC(2026, 0, 1);
let state: ResponseState;

beforeEach(async () => {
  storage = await openStorage({ type: 'sqlite', sqlitePath: ':memory:' });
  now = Date.UTC(2026, 0, 1);
  state = new ResponseState({
    store: storage.responses,
    retentionMs: day,
    sweepIntervalMs: 60_000,
    logger: pino({ level: 'silent' }),
    now: () => now,
  });
});

afterEach(async () => {
  await state.stop();
  await storage.close();
});

/** Runs one request through prepare and saves a response with one output message. */
async function turn(id: string, body: Record<string, unknown>, userPath = '/team/app'): Promise<string> {
  const prepared = await state.prepare(body, userPath);
  const output = [{ id: `msg_out_${id}`, type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `answer ${id}` }] }];
  await state.save({
    response: { id, object: 'response', output },
    own: prepared.own,
    previousResponseId: prepared.previousResponseId,
    userPath,
    provider: 'p',
    model: 'm',
  });
  return id;
}

const textsOf = (items: readonly Record<string, unknown>[]): string[] =>
  items.map((item) => ((item['content'] as { text: string }[] | undefined) ?? []).map((part) => part.text).join(''));

describe('ResponseState', () => {
  it('puts the whole chain before the new input for previous_response_id, oldest first', async () => {
    await turn('resp_1', { input: 'one' });
    await turn('resp_2', { input: 'two', previous_response_id: 'resp_1' });
    const prepared = await state.prepare({ input: 'three', previous_response_id: 'resp_2' }, '/team/app');
    expect(textsOf(prepared.context)).toEqual(['one', 'answer resp_1', 'two', 'answer resp_2', 'three']);
    expect(textsOf(prepared.own)).toEqual(['three']);
    expect(prepared.previousResponseId).toBe('resp_2');
  });

  it('resolves item_reference items, for the creating path and its ancestors only', async () => {
    await turn('resp_1', { input: 'one' });
    const body = {
      input: [
        { type: 'item_reference', id: 'msg_out_resp_1' },
        { role: 'user', content: 'next' },
      ],
    };
    expect(textsOf((await state.prepare(body, '/team')).context)).toEqual(['answer resp_1', 'next']);
    const error = await rejected(GatewayError, state.prepare(body, '/team/other'));
    expect(error.code).toBe('item_not_found');
    await expect(state.prepare({ input: 'x', previous_response_id: 'resp_1' }, '/TEAM/APP/sub')).rejects.toThrow("'resp_1' not found");
  });

  it('forgets a response once it expired, and the sweep removes it', async () => {
    await turn('resp_1', { input: 'one' });
    expect((await state.retrieve('resp_1', '/')).id).toBe('resp_1');
    now += day;
    await expect(state.retrieve('resp_1', '/')).rejects.toMatchObject({ status: 404, code: 'response_not_found' });
    expect(await state.sweep()).toBe(3);
    expect(await state.sweep()).toBe(0);
  });

  it('deletes a response for a reader that sees it', async () => {
    await turn('resp_1', { input: 'one' });
    await expect(state.remove('resp_1', '/elsewhere')).rejects.toMatchObject({ status: 404 });
    expect(await state.remove('resp_1', '/team')).toEqual({ id: 'resp_1', object: 'response', deleted: true });
    await expect(state.inputItems('resp_1', '/team', {})).rejects.toMatchObject({ status: 404 });
  });
});

describe('normalizeInput', () => {
  it('gives every item an id and a type, and message text parts', () => {
    const items = normalizeInput([
      { role: 'assistant', content: 'hi' },
      { type: 'function_call_output', call_id: 'c', output: 'x', id: 'fco_1' },
    ]);
    expect(items[0]).toMatchObject({
      id: expect.stringMatching(/^msg_[0-9a-f]{48}$/) as unknown,
      type: 'message',
      content: [{ type: 'output_text', text: 'hi' }],
    });
    expect(items[1]).toEqual({ type: 'function_call_output', call_id: 'c', output: 'x', id: 'fco_1' });
    expect(normalizeInput(undefined)).toEqual([]);
  });
});

describe('pageOf', () => {
  const items = ['a', 'b', 'c'].map((id) => ({ id }));
  it('pages newest first by default, with after and limit', () => {
    expect(pageOf(items, { limit: '2' })).toEqual({
      object: 'list',
      data: [{ id: 'c' }, { id: 'b' }],
      first_id: 'c',
      last_id: 'b',
      has_more: true,
    });
    expect(pageOf(items, { order: 'asc', after: 'a' })).toMatchObject({ data: [{ id: 'b' }, { id: 'c' }], has_more: false });
    expect(pageOf([], {})).toEqual({ object: 'list', data: [], first_id: null, last_id: null, has_more: false });
  });

  it('refuses a bad limit or order', () => {
    expect(() => pageOf(items, { limit: '0' })).toThrow('limit');
    expect(() => pageOf(items, { order: 'up' })).toThrow('order');
  });
});
