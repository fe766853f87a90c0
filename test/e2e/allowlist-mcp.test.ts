import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { rejectionOf } from '../support/clients.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { call, chatBody } from '../support/http.ts';
import { connectMcp, type McpConnection, textOf, waitForConnected } from '../support/mcp.ts';
import { type McpFixture, startMcpFixture } from '../support/mcp-fixture-server.ts';
import { signingKey, signToken, type TestSigningKey } from '../support/mock-jwks.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';

// Issue 19: an endpoint allowlist (here from a JWT claim) on model endpoints, `/mcp` and MCP
// server names, through the MCP SDK's own client.

const issuer = 'https://login.example.test/';

describe('endpoint allowlists: model endpoints and /mcp', () => {
  let alpha: McpFixture;
  let beta: McpFixture;
  let mock: MockUpstream;
  let gateway: GatewayProcess;
  let key: TestSigningKey;
  const connections: McpConnection[] = [];

  const token = (endpoints: string[] | string) => signToken(key, { iss: issuer, aud: 'gateway', sub: 'ed', endpoints });

  beforeAll(async () => {
    key = await signingKey('login-1', 'ES256');
    mock = await startMockUpstream();
    alpha = await startMcpFixture({ label: 'alpha', tools: ['echo'] });
    beta = await startMcpFixture({ label: 'beta', tools: ['echo'] });
    const configYaml = `
auth:
  jwt:
    issuers:
      - issuer: ${issuer}
        keys: [${JSON.stringify(key.publicJwk)}]
        audiences: [gateway]
        allowed_endpoints_claim: endpoints
mcp:
  servers:
    alpha:
      url: ${alpha.url}
    beta:
      url: ${beta.url}
`;
    gateway = await startGateway({
      configYaml,
      env: { MASTER_KEY, OPENAI_API_KEY: 'sk-upstream', OPENAI_BASE_URL: mock.url, OPENAI_MODELS: 'mock-model' },
    });
    await waitForConnected(gateway, ['alpha', 'beta']);
  });

  afterAll(async () => {
    await Promise.all(connections.map(({ client }) => client.close().catch(() => undefined)));
    await gateway?.stop();
    await Promise.all([alpha?.close(), beta?.close(), mock?.close()]);
  });

  it('a model endpoint outside the list is 403 endpoint_not_allowed; listed ones pass', async () => {
    const onlyEmbeddings = await token(['/v1/embeddings']);
    const refused = await call(gateway, '/v1/chat/completions', { token: onlyEmbeddings, body: chatBody('mock-model') });
    expectEnvelope(refused, { status: 403, type: 'permission_error', code: 'endpoint_not_allowed' });
    const chat = await call(gateway, '/v1/chat/completions', { token: await token('/v1/chat/completions'), body: chatBody('mock-model') });
    expect(chat.status, chat.text).toBe(200);
    expect((await call(gateway, '/v1/models', { token: onlyEmbeddings })).status).toBe(200);
  });

  it('a server name allows that MCP server only; /mcp allows all of them', async () => {
    const alphaOnly = await token(['alpha']);
    const connection = await connectMcp(gateway, 'alpha', { token: alphaOnly });
    connections.push(connection);
    expect(textOf(await connection.client.callTool({ name: 'echo', arguments: { text: 'hi' } }))).toContain('hi');
    expect(String(await rejectionOf(connectMcp(gateway, 'beta', { token: alphaOnly })))).toMatch(/403|endpoint_not_allowed/);
    expect(String(await rejectionOf(connectMcp(gateway, '', { token: alphaOnly })))).toMatch(/403|endpoint_not_allowed/);
    const everything = await connectMcp(gateway, 'beta', { token: await token(['/mcp']) });
    connections.push(everything);
    expect(textOf(await everything.client.callTool({ name: 'echo', arguments: { text: 'yo' } }))).toContain('yo');
  });

  it('/mcp refuses a caller whose list names only model endpoints', async () => {
    const reply = await call(gateway, '/mcp/alpha', {
      token: await token(['/v1/chat/completions']),
      body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} },
      headers: { accept: 'application/json, text/event-stream' },
    });
    expectEnvelope(reply, { status: 403, type: 'permission_error', code: 'endpoint_not_allowed' });
  });
});
