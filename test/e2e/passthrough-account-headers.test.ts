import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type GatewayProcess, MASTER_KEY, startGateway, UPSTREAM_KEY } from '../support/gateway-process.ts';
import { call, callJson, chatBody } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';

// Issue 27 "Passthrough headers by allowlist": headers that pick the account or project the
// instance's shared key acts for (OpenAI-Organization, OpenAI-Project, x-goog-user-project)
// are dropped on /p/{instance}/... unless the instance sets forward_account_headers: true.

const accountHeaders = {
  'OpenAI-Organization': 'org-victim',
  'OpenAI-Project': 'proj_victim',
  'x-goog-user-project': 'victim-billing-project',
};

describe('passthrough account-selecting headers', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;
  let tenantKey: string;

  beforeAll(async () => {
    mock = await startMockUpstream();
    const configYaml = `
providers:
  oai:
    type: openai
    api_key: ${UPSTREAM_KEY}
    base_url: ${mock.url}
    models: [mock-model]
  trusted:
    type: openai
    api_key: ${UPSTREAM_KEY}
    base_url: ${mock.url}
    models: [mock-model]
    forward_account_headers: true
`;
    gateway = await startGateway({ env: { MASTER_KEY }, configYaml });
    tenantKey = String((await callJson(gateway, '/admin/api-keys', 201, { body: { name: 'tenant', user_path: '/team/a' } }))['key']);
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  const lastChatHeaders = () => mock.requests.filter((recorded) => recorded.path.endsWith('/chat/completions')).at(-1)?.headers ?? {};

  it('drops them for an ordinary key on an instance that does not forward them', async () => {
    const reply = await call(gateway, '/p/oai/chat/completions', {
      token: tenantKey,
      body: chatBody('mock-model'),
      headers: accountHeaders,
    });
    expect(reply.status, reply.text).toBe(200);
    const seen = lastChatHeaders();
    expect(seen['authorization']).toBe(`Bearer ${UPSTREAM_KEY}`);
    for (const name of Object.keys(accountHeaders)) expect(seen[name.toLowerCase()], name).toBeUndefined();
  });

  it('forwards them when the instance sets forward_account_headers: true', async () => {
    const reply = await call(gateway, '/p/trusted/chat/completions', {
      token: tenantKey,
      body: chatBody('mock-model'),
      headers: accountHeaders,
    });
    expect(reply.status, reply.text).toBe(200);
    const seen = lastChatHeaders();
    for (const [name, value] of Object.entries(accountHeaders)) expect(seen[name.toLowerCase()], name).toBe(value);
  });
});
