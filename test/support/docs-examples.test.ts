import { describe, expect, it } from 'vitest';

import { matchesShown, parseCurl, parseDocBlocks } from './docs-examples.ts';

// The reader of documentation examples: if it misread a page, docs-examples.test.ts would
// send something other than what the page shows.

describe('parseDocBlocks', () => {
  it('finds fenced blocks with their language and opening line', () => {
    const blocks = parseDocBlocks('# T\n\n```yaml\na: 1\n```\ntext\n```sh\ncurl http://x/\n```\n```\nplain\n```\n');
    expect(blocks).toEqual([
      { lang: 'yaml', text: 'a: 1\n', line: 3 },
      { lang: 'sh', text: 'curl http://x/\n', line: 7 },
      { lang: '', text: 'plain\n', line: 10 },
    ]);
  });
});

describe('parseCurl', () => {
  it('joins continuations, reads method, headers and body, and keeps placeholders', () => {
    const block = [
      'curl -s -X PATCH "http://127.0.0.1:8080/admin/api-keys/$KEY_ID" \\',
      "  -H 'Authorization: Bearer change-me' -H 'content-type: application/json' \\",
      `  -d '{"name": "a # b"}'`,
      "curl -s 'http://127.0.0.1:8080/admin/usage?group_by=model' # a comment",
      'echo not a curl',
    ].join('\n');
    expect(parseCurl(block, 10)).toEqual([
      {
        method: 'PATCH',
        path: '/admin/api-keys/$KEY_ID',
        headers: { authorization: 'Bearer change-me', 'content-type': 'application/json' },
        body: '{"name": "a # b"}',
        line: 11,
      },
      { method: 'GET', path: '/admin/usage?group_by=model', headers: {}, line: 14 },
    ]);
  });

  it('takes POST when a body is given without -X', () => {
    expect(parseCurl(`curl http://h/v1/x -d '{}'`, 0)[0]?.method).toBe('POST');
  });

  it('refuses what it cannot read rather than skip it', () => {
    expect(() => parseCurl('curl -s', 0)).toThrow(/no URL/);
    expect(() => parseCurl(`curl http://h/ 'unclosed`, 0)).toThrow(/unclosed quote/);
  });
});

describe('matchesShown', () => {
  it('compares the fields shown, values included, and only the presence of ids and times', () => {
    const answer = { id: 'k1', name: 'a', role: 'user', tags: ['x', 'y'], extra: 1 };
    expect(matchesShown(answer, { id: 'other', name: 'a', tags: ['x'] })).toBe(true);
    expect(matchesShown(answer, { name: 'b' })).toBe(false);
    expect(matchesShown(answer, { missing: null })).toBe(false);
    expect(matchesShown(answer, { tags: ['y'] })).toBe(false);
    expect(matchesShown([answer], [{ role: 'user' }])).toBe(true);
  });
});
