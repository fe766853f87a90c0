import { describe, expect, it } from 'vitest';
import { summaryOf } from './relay-response.ts';
import { splitQuery } from './resources.ts';

describe('splitQuery', () => {
  it('takes the provider hint out of the query and keeps the rest', () => {
    expect(splitQuery('/v1/files?purpose=batch&provider=backup&limit=2')).toEqual({ hint: 'backup', query: '?purpose=batch&limit=2' });
    expect(splitQuery('/v1/files?provider=backup')).toEqual({ hint: 'backup', query: '' });
    expect(splitQuery('/v1/files?provider=')).toEqual({ hint: undefined, query: '' });
    expect(splitQuery('/v1/files')).toEqual({ hint: undefined, query: '' });
  });
});

describe('summaryOf', () => {
  it('reads usage and model of a JSON object answer', () => {
    expect(summaryOf('{"model":"m","usage":{"total_tokens":3}}')).toEqual({ model: 'm', usage: { total_tokens: 3 } });
    expect(summaryOf('{"text":"hi"}')).toEqual({ model: null, usage: null });
    expect(summaryOf('[1]')).toBeNull();
    expect(summaryOf('not json')).toBeNull();
  });
});
