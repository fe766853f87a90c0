import { describe, expect, it } from 'vitest';

import { readCallTool } from './discovery-tools.ts';

const deep = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);

describe('readCallTool', () => {
  it('unwraps arguments sent as a JSON string', () => {
    expect(readCallTool({ name: ' echo ', arguments: '{"text":"hi"}' })).toEqual({ name: 'echo', arguments: { text: 'hi' } });
  });

  it('refuses string arguments nested deeper than the body bound instead of parsing them', () => {
    expect(readCallTool({ name: 'echo', arguments: `{"a":${deep(10_000)}}` })).toBe(
      'invalid call_tool arguments: nested deeper than 128 levels',
    );
    expect(readCallTool({ name: 'echo', arguments: `{"a":${deep(100)}}` })).toMatchObject({ name: 'echo' });
  });
});
