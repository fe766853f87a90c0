import { describe, expect, it } from 'vitest';

import { messageFileIds, withGatewayResultsUrl } from './anthropic-resources.ts';

describe('messageFileIds', () => {
  it('finds file blocks in messages, tool results and the system prompt, once each', () => {
    const file = (id: string) => ({ type: 'document', source: { type: 'file', file_id: id } });
    const body = {
      system: [file('file_sys')],
      messages: [
        { role: 'user', content: [file('file_a'), { type: 'image', source: { type: 'file', file_id: 'file_b' } }, file('file_a')] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [file('file_c')] }] },
        { role: 'user', content: [{ type: 'document', source: { type: 'base64', data: 'x' } }, 'text'] },
        { role: 'user', content: 'plain' },
      ],
    };
    expect(messageFileIds(body).sort()).toEqual(['file_a', 'file_b', 'file_c', 'file_sys']);
  });

  it('names nothing in a body without file blocks, or that is not an object', () => {
    expect(messageFileIds({ messages: [{ role: 'user', content: 'hi' }] })).toEqual([]);
    expect(messageFileIds(null)).toEqual([]);
    expect(messageFileIds([1, 2])).toEqual([]);
  });
});

describe('withGatewayResultsUrl', () => {
  it('points results_url at the gateway, the id encoded; leaves a batch without results as it is', () => {
    const ended = { id: 'msgbatch_1/x', results_url: 'https://api.anthropic.com/v1/messages/batches/msgbatch_1/results' };
    expect(withGatewayResultsUrl(ended, 'http://gw:8080').results_url).toBe('http://gw:8080/v1/messages/batches/msgbatch_1%2Fx/results');
    const running = { id: 'msgbatch_2', results_url: null };
    expect(withGatewayResultsUrl(running, 'http://gw')).toBe(running);
  });
});
