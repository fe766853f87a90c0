import { createHmac } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectEnvelope } from '../support/envelopes.ts';
import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call, callJson, chatBody } from '../support/http.ts';
import { connectMcp, textOf, waitForConnected } from '../support/mcp.ts';
import { type McpFixture, startMcpFixture } from '../support/mcp-fixture-server.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';

// Issue 27 "Secrets never follow a new destination": a redacted value (`***`) sent back in an
// update keeps the stored secret only while the destination's origin is unchanged; otherwise
// 400 `secret_required` naming the field. Attacked here with an admin-role key.

interface Recorded {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** An HTTP server that records everything and answers `{"action":"pass"}` (a webhook, or an attacker's sink). */
async function startRecorder(): Promise<{ url: string; seen: Recorded[]; close(): Promise<void> }> {
  const seen: Recorded[] = [];
  const server: Server = createServer((request, response) => {
    let body = '';
    request.setEncoding('utf8');
    request.on('data', (chunk: string) => (body += chunk));
    request.on('end', () => {
      seen.push({ path: request.url ?? '', headers: request.headers, body });
      response.setHeader('content-type', 'application/json');
      response.end('{"action":"pass"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    seen,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

describe('a redacted secret never follows a new destination', () => {
  let mock: MockUpstream;
  let fixture: McpFixture;
  let attacker: Awaited<ReturnType<typeof startRecorder>>;
  let hook: Awaited<ReturnType<typeof startRecorder>>;
  let gateway: GatewayProcess;
  let adminKey: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    fixture = await startMcpFixture({ label: 'tools', tools: ['whoami'] });
    attacker = await startRecorder();
    hook = await startRecorder();
    gateway = await startGateway({ env: gatewayEnv(mock, { OPENAI_MODELS: 'mock-model', MCP_ENABLED: 'true' }) });
    adminKey = String((await callJson(gateway, '/admin/api-keys', 201, { body: { name: 'ops', role: 'admin' } }))['key']);
  });

  afterAll(async () => {
    await gateway?.stop();
    await fixture?.close();
    await attacker?.close();
    await hook?.close();
    await mock?.close();
  });

  const putServer = (body: unknown) => call(gateway, '/admin/mcp-servers', { method: 'PUT', body, token: adminKey });

  it('MCP server: *** with a new origin answers 400 secret_required naming the header; the secret is never sent', async () => {
    const saved = await call(gateway, '/admin/mcp-servers', {
      method: 'PUT',
      body: { slug: 'tools', url: fixture.url, headers: { 'X-Fixture-Token': 'real-secret' } },
    });
    expect(saved.status, saved.text).toBe(200);
    const fixtureUrl = new URL(fixture.url);
    const moved = [
      `${attacker.url}/mcp`,
      `http://localhost:${fixtureUrl.port}${fixtureUrl.pathname}`,
      `https://${fixtureUrl.host}${fixtureUrl.pathname}`,
      `http://${fixtureUrl.hostname}:${Number(fixtureUrl.port) + 1}${fixtureUrl.pathname}`,
    ];
    for (const url of moved) {
      const reply = await putServer({ slug: 'tools', url, headers: { 'X-Fixture-Token': '***' } });
      expectEnvelope(reply, { status: 400, type: 'invalid_request_error', code: 'secret_required', param: 'headers.X-Fixture-Token' });
    }
    // Nor by creating another server that reuses the name of a stored header.
    const copied = await putServer({ slug: 'copy', url: `${attacker.url}/mcp`, headers: { 'X-Fixture-Token': '***' } });
    expectEnvelope(copied, { status: 400, type: 'invalid_request_error', code: 'secret_required' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(attacker.seen).toEqual([]);
    // The server still points at its own origin, with its secret.
    await waitForConnected(gateway, ['tools']);
    const { client } = await connectMcp(gateway, 'tools');
    expect(JSON.parse(textOf(await client.callTool({ name: 'whoami', arguments: {} })))).toMatchObject({ token: 'real-secret' });
    await client.close();
  });

  it('MCP server: *** on the same origin (another path) keeps the stored secret', async () => {
    const kept = await putServer({ slug: 'tools', url: `${fixture.url}?v=2`, headers: { 'X-Fixture-Token': '***' } });
    expect(kept.status, kept.text).toBe(200);
    const moved = await putServer({ slug: 'tools', url: `${attacker.url}/mcp`, headers: { 'X-Fixture-Token': 'a-new-secret' } });
    expect(moved.status, moved.text).toBe(200);
    const back = await putServer({ slug: 'tools', url: fixture.url, headers: { 'X-Fixture-Token': '***' } });
    expectEnvelope(back, { status: 400, type: 'invalid_request_error', code: 'secret_required' });
    expect(attacker.seen.some((request) => JSON.stringify(request.headers).includes('real-secret'))).toBe(false);
  });

  it('MCP server: a secret in the URL (password, api_key) is *** in views; sent back it stays on the same origin only', async () => {
    const vault = await startRecorder();
    try {
      const withPassword = await putServer({
        slug: 'vault-pw',
        url: `${vault.url.replace('http://', 'http://user:pw-secret@')}/mcp`,
        enabled: false,
      });
      expect(withPassword.status, withPassword.text).toBe(200);
      const saved = await putServer({ slug: 'vault', url: `${vault.url}/mcp?api_key=q-secret&v=1` });
      expect(saved.status, saved.text).toBe(200);
      const viewer = String((await callJson(gateway, '/admin/api-keys', 201, { body: { name: 'viewer', role: 'viewer' } }))['key']);
      const listed = await call(gateway, '/admin/mcp-servers', { token: viewer });
      expect(listed.status, listed.text).toBe(200);
      for (const text of [withPassword.text, saved.text, listed.text]) {
        expect(text).not.toContain('pw-secret');
        expect(text).not.toContain('q-secret');
      }
      const shown = (JSON.parse(listed.text) as Array<{ slug: string; url: string }>).find((server) => server.slug === 'vault')?.url ?? '';
      expect(shown).toContain('api_key=***');
      // Sent back on another origin: refused, naming the field.
      const moved = await putServer({ slug: 'vault', url: shown.replace(new URL(vault.url).host, new URL(attacker.url).host) });
      expectEnvelope(moved, { status: 400, type: 'invalid_request_error', code: 'secret_required', param: 'url' });
      // On the same origin (another query): the stored values are kept, never `***`.
      const kept = await putServer({ slug: 'vault', url: shown.replace('v=1', 'v=2') });
      expect(kept.status, kept.text).toBe(200);
      await expect.poll(() => vault.seen.some((request) => request.path.includes('api_key=q-secret&v=2')), { timeout: 5000 }).toBe(true);
      expect(vault.seen.some((request) => request.path.includes('***') || request.path.includes('%2A%2A%2A'))).toBe(false);
      expect(attacker.seen.some((request) => request.path.includes('q-secret'))).toBe(false);
    } finally {
      await putServer({ slug: 'vault', url: `${vault.url}/mcp`, enabled: false });
      await call(gateway, '/admin/mcp-servers/vault-pw', { method: 'DELETE' });
      await vault.close();
    }
  });

  it('webhook guardrail: secret *** with a new origin answers 400 secret_required; the same origin keeps the signing secret', async () => {
    const webhook = { name: 'hook', type: 'webhook', url: `${hook.url}/check`, secret: 'hook-secret' };
    const saved = await call(gateway, '/admin/guardrails', { method: 'PUT', body: webhook });
    expect(saved.status, saved.text).toBe(200);
    const stolen = await call(gateway, '/admin/guardrails', {
      method: 'PUT',
      body: { ...webhook, url: `${attacker.url}/check`, secret: '***' },
      token: adminKey,
    });
    expectEnvelope(stolen, { status: 400, type: 'invalid_request_error', code: 'secret_required', param: 'secret' });
    const kept = await call(gateway, '/admin/guardrails', {
      method: 'PUT',
      body: { ...webhook, url: `${hook.url}/v2/check`, secret: '***' },
      token: adminKey,
    });
    expect(kept.status, kept.text).toBe(200);
    expect(JSON.parse(kept.text)).toMatchObject({ url: `${hook.url}/v2/check`, secret_set: true });
    const chat = await call(gateway, '/v1/chat/completions', { body: chatBody('mock-model') });
    expect(chat.status, chat.text).toBe(200);
    const asked = hook.seen.at(-1);
    expect(asked?.path).toBe('/v2/check');
    const signature = `sha256=${createHmac('sha256', 'hook-secret')
      .update(asked?.body ?? '')
      .digest('hex')}`;
    expect(asked?.headers['x-guardrail-signature']).toBe(signature);
    expect(attacker.seen.filter((request) => request.path === '/check')).toEqual([]);
  });

  it('webhook guardrail: a token in the URL is *** in views and never follows a new origin', async () => {
    const saved = await call(gateway, '/admin/guardrails', {
      method: 'PUT',
      body: { name: 'hook-url', type: 'webhook', url: `${hook.url}/check?token=t-secret` },
    });
    expect(saved.status, saved.text).toBe(200);
    expect(saved.text).not.toContain('t-secret');
    const listed = await call(gateway, '/admin/guardrails', { token: adminKey });
    expect(listed.text).not.toContain('t-secret');
    const shown = `${hook.url}/check?token=***`;
    expect(listed.text).toContain(shown);
    const moved = await call(gateway, '/admin/guardrails', {
      method: 'PUT',
      token: adminKey,
      body: { name: 'hook-url', type: 'webhook', url: shown.replace(new URL(hook.url).host, new URL(attacker.url).host) },
    });
    expectEnvelope(moved, { status: 400, type: 'invalid_request_error', code: 'secret_required', param: 'url' });
    const kept = await call(gateway, '/admin/guardrails', {
      method: 'PUT',
      token: adminKey,
      body: { name: 'hook-url', type: 'webhook', url: shown },
    });
    expect(kept.status, kept.text).toBe(200);
    const before = hook.seen.length;
    const chat = await call(gateway, '/v1/chat/completions', { body: chatBody('mock-model') });
    await call(gateway, '/admin/guardrails?name=hook-url', { method: 'DELETE' });
    expect(chat.status, chat.text).toBe(200);
    const paths = hook.seen.slice(before).map((request) => request.path);
    expect(paths).toContain('/check?token=t-secret');
    expect(paths.some((path) => path.includes('*') || path.includes('%2A'))).toBe(false);
  });
});
