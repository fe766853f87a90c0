import { describe, expect, it } from 'vitest';
import { resourcePath, splitQuery } from './resources.ts';

describe('splitQuery', () => {
  it('takes the provider hint out of the query and keeps the rest', () => {
    expect(splitQuery('/v1/files?purpose=batch&provider=backup&limit=2')).toEqual({ hint: 'backup', query: '?purpose=batch&limit=2' });
    expect(splitQuery('/v1/files?provider=backup')).toEqual({ hint: 'backup', query: '' });
    expect(splitQuery('/v1/files?provider=')).toEqual({ hint: undefined, query: '' });
    expect(splitQuery('/v1/files')).toEqual({ hint: undefined, query: '' });
  });
});

describe('resourcePath', () => {
  it('encodes an id into one path segment', () => {
    expect(resourcePath('files', 'file-abc', 'content')).toBe('files/file-abc/content');
    expect(resourcePath('batches', 'a/b?c')).toBe('batches/a%2Fb%3Fc');
  });

  it('refuses an id that is a dot segment (the URL would climb out of the resource)', () => {
    for (const id of ['.', '..']) {
      expect(() => resourcePath('files', id), id).toThrow(expect.objectContaining({ status: 400, code: 'invalid_path' }));
    }
  });
});
