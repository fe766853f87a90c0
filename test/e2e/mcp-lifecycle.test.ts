import { setTimeout as sleep } from 'node:timers/promises';

import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { rejectionOf } from '../support/clients.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { call } from '../support/http.ts';
import { connectMcp, listVirtualServers, rawMcpPost, textOf, waitForConnected } from '../support/mcp.ts';
import { type McpFixture, startMcpFixture } from '../support/mcp-fixture-server.ts';
import { waitFor } from '../support/wait.ts';

// Admin credentials on the virtual server listing, and what removing a server or a virtual
// server does to open downstream sessions and to upstream sessions.

describe('MCP credentials and lifecycle', () => {
  let alpha: McpFixture;
  let gamma: McpFixture;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    alpha = await startMcpFixture({ label: 'alpha', tools: ['echo', 'add'] });
    gamma = await startMcpFixture({ label: 'gamma', tools: ['echo', 'whoami'] });
    gateway = await startGateway({ configYaml: `mcp:\n  servers:\n    alpha: { url: "${alpha.url}" }\n`, env: { MASTER_KEY } });
    await waitForConnected(gateway, ['alpha']);
  });

  afterAll(async () => {
    await gateway?.stop();
    await alpha?.close();
    await gamma?.close();
  });

  it('the listing refuses a malformed Authorization header and a wrong x-api-key, and accepts the master key as x-api-key', async () => {
    const malformed: Array<Record<string, string>> = [
      { authorization: 'Basic YWRtaW46YWRtaW4=' },
      { authorization: 'Bearer' },
      { authorization: `Bearer ${MASTER_KEY} extra` },
      { 'x-api-key': 'wrong' },
      { authorization: `bearer ${MASTER_KEY}x` },
    ];
    for (const headers of malformed) {
      const reply = await call(gateway, '/admin/mcp-virtual-servers', { token: null, headers });
      expectEnvelope(reply, { status: 401, type: 'authentication_error' });
    }
    const viaApiKey = await call(gateway, '/admin/mcp-virtual-servers', { token: null, headers: { 'x-api-key': MASTER_KEY } });
    expect(viaApiKey.status, viaApiKey.text).toBe(200);
  });

  it('deleting a server makes it missing at once, ends its pinned sessions and its upstream session', async () => {
    expect((await call(gateway, '/admin/mcp-servers', { method: 'PUT', body: { slug: 'gamma', url: gamma.url } })).status).toBe(200);
    expect(
      (await call(gateway, '/admin/mcp-virtual-servers', { method: 'PUT', body: { name: 'both', servers: ['alpha', 'gamma'] } })).status,
    ).toBe(200);
    await waitForConnected(gateway, ['gamma']);
    const virtual = await connectMcp(gateway, 'both');
    const pinned = await connectMcp(gateway, 'gamma');
    expect(textOf(await virtual.client.callTool({ name: 'gamma_echo', arguments: { text: 'x' } }))).toBe('gamma: x');
    // The shared session that lists the catalog, and the virtual session's own upstream session (ADR 0033).
    expect(gamma.sessionCount()).toBe(2);
    expect((await call(gateway, '/admin/mcp-servers/gamma', { method: 'DELETE' })).status).toBe(204);
    expect((await listVirtualServers(gateway)).find((entry) => entry.name === 'both')?.['missing_servers']).toEqual(['gamma']);
    expect((await virtual.client.listTools()).tools.map((tool) => tool.name)).toEqual(['add', 'echo']);
    const gone = await rejectionOf(virtual.client.callTool({ name: 'gamma_echo', arguments: { text: 'x' } }));
    expect(gone).toBeInstanceOf(McpError);
    const stale = await rawMcpPost(
      gateway,
      '/mcp/gamma',
      { id: 3, method: 'tools/list' },
      { 'mcp-session-id': pinned.transport.sessionId ?? '' },
    );
    expectEnvelope(stale, { status: 404, type: 'not_found_error' });
    // The gateway ends its upstream session rather than leaving it to the upstream's own timeout.
    await waitFor(
      () => gamma.sessionCount(),
      (count) => count === 0,
    );
    await virtual.client.close();
    await pinned.client.close();
  });

  it('deleting a virtual server ends its open sessions: their notification streams close and the id stays dead', async () => {
    expect((await call(gateway, '/admin/mcp-virtual-servers', { method: 'PUT', body: { name: 'short', servers: ['alpha'] } })).status).toBe(
      200,
    );
    const initialize = {
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1.0.0' } },
    };
    const opened = await rawMcpPost(gateway, '/mcp/short', initialize, {});
    expect(opened.status, opened.text).toBe(200);
    const sessionId = String(opened.headers['mcp-session-id']);
    const initialized = await rawMcpPost(gateway, '/mcp/short', { method: 'notifications/initialized' }, { 'mcp-session-id': sessionId });
    expect(initialized.status, initialized.text).toBe(202);
    const stream = await request(`${gateway.url}/mcp/short`, {
      method: 'GET',
      headers: { authorization: `Bearer ${MASTER_KEY}`, accept: 'text/event-stream', 'mcp-session-id': sessionId },
    });
    expect(stream.statusCode).toBe(200);
    const ended = stream.body.text().then(
      () => 'ended',
      () => 'ended',
    );
    expect((await call(gateway, '/admin/mcp-virtual-servers/short', { method: 'DELETE' })).status).toBe(204);
    expect(await Promise.race([ended, sleep(3000).then(() => 'still open')])).toBe('ended');
    // Re-creating the name does not bring the old session back.
    expect((await call(gateway, '/admin/mcp-virtual-servers', { method: 'PUT', body: { name: 'short', servers: ['alpha'] } })).status).toBe(
      200,
    );
    const revived = await rawMcpPost(gateway, '/mcp/short', { id: 4, method: 'tools/list' }, { 'mcp-session-id': sessionId });
    expectEnvelope(revived, { status: 404, type: 'not_found_error' });
  });
  it('a virtual session is dead once an admin server takes the name, which the listing reports as a conflict', async () => {
    const put = (path: string, body: unknown) => call(gateway, path, { method: 'PUT', body });
    expect((await put('/admin/mcp-virtual-servers', { name: 'taken', servers: ['alpha'] })).status).toBe(200);
    const { client, transport } = await connectMcp(gateway, 'taken');
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['add', 'echo']);
    expect((await put('/admin/mcp-servers', { slug: 'taken', url: gamma.url })).status).toBe(200);
    const listed = (await listVirtualServers(gateway)).find((entry) => entry.name === 'taken');
    expect(listed?.['conflict']).toBe(
      'virtual MCP server "taken" is not served: MCP server "taken" uses the same name; rename one of them',
    );
    const stale = await rawMcpPost(gateway, '/mcp/taken', { id: 5, method: 'tools/list' }, { 'mcp-session-id': transport.sessionId ?? '' });
    expectEnvelope(stale, { status: 404, type: 'not_found_error', code: 'mcp_session_not_found' });
    expect((await call(gateway, '/admin/mcp-servers/taken', { method: 'DELETE' })).status).toBe(204);
    await client.close().catch(() => undefined);
  });

  it('on shutdown the gateway ends its upstream sessions', async () => {
    await waitFor(
      () => alpha.sessionCount(),
      (count) => count >= 1,
    );
    await gateway.stop();
    expect(alpha.sessionCount()).toBe(0);
  });
});
