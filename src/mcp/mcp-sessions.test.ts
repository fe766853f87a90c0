import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { pino } from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { McpSessions, type McpSession } from './mcp-sessions.ts';

// Memory under load (issue 15 defect 10): sessions that clients never DELETE must not pile up
// for the 30-minute idle timeout; past the bound the least recently used one is closed.

const binding = { credential: 'master', userPath: '/', endpoint: 'aggregate' };
const closed: string[] = [];
const open: McpSessions[] = [];

function session(id: string): McpSession {
  const close = async (): Promise<void> => void closed.push(id);
  return {
    id,
    binding,
    transport: { close } as unknown as StreamableHTTPServerTransport,
    server: { close: async () => undefined } as unknown as Server,
    lastSeen: Date.now(),
  };
}

afterEach(async () => {
  for (const sessions of open.splice(0)) await sessions.closeAll();
  closed.length = 0;
});

describe('McpSessions', () => {
  it('holds at most maxSessions, closing the least recently used', async () => {
    const sessions = new McpSessions(pino({ level: 'silent' }), 3);
    open.push(sessions);
    for (const id of ['a', 'b', 'c']) sessions.add(session(id));
    expect(sessions.find('a', binding)?.id).toBe('a'); // a is now the most recently used
    for (let index = 0; index < 1000; index += 1) sessions.add(session(`s${index}`));
    expect(sessions.size).toBe(3);
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(closed).toHaveLength(1000);
    expect(closed.slice(0, 3)).toEqual(['b', 'c', 'a']);
    expect(sessions.find('s999', binding)?.id).toBe('s999');
  });
});
