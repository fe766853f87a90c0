import { setTimeout as sleep } from 'node:timers/promises';

import type { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { rejectionOf } from '../support/clients.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call, chatBody } from '../support/http.ts';
import { connectMcp, rawMcpPost, textOf, waitForConnected } from '../support/mcp.ts';
import { type McpFixture, startMcpFixture } from '../support/mcp-fixture-server.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';

// CONTRACT sections 7 and 9: each MCP POST is checked against the budgets of its user path. Every
// mock-model answer costs exactly $1 here, so one chat completion spends a $1 budget.

describe('MCP and budgets', () => {
  let mock: MockUpstream;
  let fixture: McpFixture;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    fixture = await startMcpFixture({ label: 'tools', tools: ['echo'] });
    const configYaml = `
pricing:
  mock-model: { input_per_mtok: 25000, output_per_mtok: 140000 }
budgets:
  user_paths:
    - path: /mcp-budget
      limits: [{ period: daily, amount: 1 }]
mcp:
  servers:
    tools: { url: "${fixture.url}" }
`;
    gateway = await startGateway({ configYaml, env: gatewayEnv(mock, { OPENAI_MODELS: 'mock-model' }) });
    await waitForConnected(gateway, ['tools']);
  });

  afterAll(async () => {
    await gateway?.stop();
    await fixture?.close();
    await mock?.close();
  });

  it('refuses MCP requests of a user path that spent its budget, with the budget envelope', async () => {
    const headers = { 'X-User-Path': '/mcp-budget/agent' };
    const { client, transport } = await connectMcp(gateway, 'tools', { headers });
    expect(textOf(await client.callTool({ name: 'echo', arguments: { text: 'before' } }))).toBe('tools: before');
    const chat = await call(gateway, '/v1/chat/completions', { headers: { 'x-user-path': '/mcp-budget' }, body: chatBody('mock-model') });
    expect(chat.status, chat.text).toBe(200);
    const list = { id: 3, method: 'tools/list' };
    const sessionHeaders = { 'mcp-session-id': transport.sessionId ?? '', 'x-user-path': '/mcp-budget/agent' };
    let reply = await rawMcpPost(gateway, '/mcp/tools', list, sessionHeaders);
    for (let tries = 0; reply.status === 200 && tries < 50; tries += 1) {
      await sleep(100);
      reply = await rawMcpPost(gateway, '/mcp/tools', list, sessionHeaders);
    }
    expectEnvelope(reply, { status: 429, type: 'rate_limit_error', code: 'budget_exceeded', provider: 'budget' });
    expect(Number(reply.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    const refused = await rejectionOf(connectMcp(gateway, 'tools', { headers }));
    expect((refused as StreamableHTTPError).code).toBe(429);
    // Another path is not affected.
    const other = await connectMcp(gateway, 'tools', { headers: { 'X-User-Path': '/elsewhere' } });
    expect(textOf(await other.client.callTool({ name: 'echo', arguments: { text: 'free' } }))).toBe('tools: free');
    await other.client.close();
    await client.close();
  });
});
