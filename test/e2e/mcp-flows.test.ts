import { setTimeout as sleep } from 'node:timers/promises';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  PromptListChangedNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
  type ClientCapabilities,
  type LoggingMessageNotification,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { rejectionOf } from '../support/clients.ts';
import { type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { textOf, waitForConnected } from '../support/mcp.ts';
import { type McpFixture, startMcpFixture } from '../support/mcp-fixture-server.ts';

// ADR 0033: what an upstream sends back during a call (progress, log messages, sampling,
// elicitation and roots requests, resource updates, list changes) reaches the downstream client
// that caused it, through /mcp/{server} and through a virtual server; `_meta`, completions and
// subscriptions are relayed; virtual servers list unique names bare.

interface FlowClient {
  readonly client: Client;
  readonly logs: LoggingMessageNotification['params'][];
  readonly updated: string[];
  readonly changes: string[];
  readonly sampled: string[];
}

const fullCapabilities: ClientCapabilities = { sampling: {}, elicitation: { form: {} }, roots: { listChanged: true } };

async function waitUntil(check: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await sleep(50);
  }
}

describe('MCP server-to-client flows through the gateway', () => {
  let alpha: McpFixture;
  let beta: McpFixture;
  let gateway: GatewayProcess;
  const clients: Client[] = [];

  /** The SDK client with a model, a user and roots of its own (unless `capabilities` says otherwise). */
  const connect = async (name: string, capabilities: ClientCapabilities = fullCapabilities): Promise<FlowClient> => {
    const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp/${name}`), {
      requestInit: { headers: { authorization: `Bearer ${MASTER_KEY}` } },
    });
    const client = new Client({ name: 'flows', version: '1.0.0' }, { capabilities });
    const flow: FlowClient = { client, logs: [], updated: [], changes: [], sampled: [] };
    if (capabilities.sampling) {
      client.setRequestHandler(CreateMessageRequestSchema, (request) => {
        const first = request.params.messages[0]?.content;
        const asked = first !== undefined && 'text' in first ? String(first.text) : '';
        flow.sampled.push(asked);
        return { model: 'test-model', role: 'assistant', content: { type: 'text', text: `sampled ${asked}` } };
      });
    }
    if (capabilities.elicitation) client.setRequestHandler(ElicitRequestSchema, () => ({ action: 'accept', content: { name: 'Ada' } }));
    if (capabilities.roots) client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: 'file:///work', name: 'work' }] }));
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void flow.logs.push(notification.params));
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => void flow.updated.push(notification.params.uri));
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => void flow.changes.push('tools'));
    client.setNotificationHandler(PromptListChangedNotificationSchema, () => void flow.changes.push('prompts'));
    await client.connect(transport);
    clients.push(client);
    return flow;
  };

  beforeAll(async () => {
    alpha = await startMcpFixture({ label: 'alpha', tools: ['echo', 'sleep'], flows: true });
    beta = await startMcpFixture({ label: 'beta', tools: ['echo', 'add'], flows: [] });
    const configYaml = `
mcp:
  servers:
    alpha: { url: "${alpha.url}", tool_timeout_seconds: 1 }
    beta: { url: "${beta.url}" }
  virtual_servers:
    both: { servers: [alpha, beta] }
`;
    gateway = await startGateway({ configYaml, env: { MASTER_KEY } });
    await waitForConnected(gateway, ['alpha', 'beta']);
  });

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close().catch(() => undefined)));
    await gateway?.stop();
    await alpha?.close();
    await beta?.close();
  });

  it('advertises what the members support: listChanged, subscribe, logging and completions', async () => {
    const { client } = await connect('both');
    expect(client.getServerCapabilities()).toMatchObject({
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { listChanged: true, subscribe: true },
      logging: {},
      completions: {},
    });
  });

  it.each(['alpha', 'both'])(
    'relays progress under the client token, and each notification restarts the call timeout (/mcp/%s)',
    async (name) => {
      const { client } = await connect(name);
      const progress: Progress[] = [];
      // Four steps of 400 ms: 1.6 s, past alpha's 1 s tool timeout unless progress restarts it.
      const result = await client.callTool({ name: 'progress', arguments: { steps: 4, ms: 400 } }, undefined, {
        onprogress: (update) => void progress.push(update),
        timeout: 10_000,
      });
      expect(textOf(result)).toBe('alpha: 4 steps');
      expect(progress.map((update) => [update.progress, update.total, update.message])).toEqual([
        [1, 4, 'alpha step 1'],
        [2, 4, 'alpha step 2'],
        [3, 4, 'alpha step 3'],
        [4, 4, 'alpha step 4'],
      ]);
    },
  );

  it.each(['alpha', 'both'])(
    'forwards logging/setLevel and relays the log messages of a call to its session only (/mcp/%s)',
    async (name) => {
      const caller = await connect(name);
      const bystander = await connect(name);
      await caller.client.setLoggingLevel('info');
      await bystander.client.setLoggingLevel('debug');
      expect(textOf(await caller.client.callTool({ name: 'log', arguments: {} }))).toBe('alpha: logged');
      await waitUntil(() => caller.logs.length >= 2);
      await sleep(200);
      // The debug message is below the level the caller set upstream (arrival order may vary).
      expect(caller.logs.map((log) => `${log.level}: ${String(log.data)}`).sort()).toEqual([
        'info: alpha: working',
        'warning: alpha: session warning',
      ]);
      expect(bystander.logs).toEqual([]);
    },
  );

  it.each(['alpha', 'both'])('relays sampling, elicitation and roots requests to the client that caused them (/mcp/%s)', async (name) => {
    const caller = await connect(name);
    const other = await connect(name);
    expect(textOf(await caller.client.callTool({ name: 'sample', arguments: {} }))).toBe('alpha: sampled from alpha by test-model');
    expect(caller.sampled).toEqual(['from alpha']);
    expect(other.sampled).toEqual([]);
    expect(textOf(await caller.client.callTool({ name: 'elicit', arguments: {} }))).toBe('alpha: accept {"name":"Ada"}');
    expect(textOf(await caller.client.callTool({ name: 'roots', arguments: {} }))).toBe('alpha: file:///work');
  });

  it('declares upstream only the client capabilities the downstream client declared', async () => {
    const capable = await connect('alpha');
    expect(JSON.parse(textOf(await capable.client.callTool({ name: 'caps', arguments: {} })))).toEqual(fullCapabilities);
    const bare = await connect('both', {});
    expect(JSON.parse(textOf(await bare.client.callTool({ name: 'caps', arguments: {} })))).toEqual({});
    const refused = await bare.client.callTool({ name: 'sample', arguments: {} });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain('Method not found');
  });

  it('forwards _meta on requests and results', async () => {
    for (const name of ['alpha', 'both']) {
      const { client } = await connect(name);
      const result = await client.callTool({ name: 'meta', arguments: {}, _meta: { 'example.com/trace': 'abc' } });
      expect(JSON.parse(textOf(result))).toEqual({ 'example.com/trace': 'abc' });
      expect(result._meta).toEqual({ 'fixture/echoed': { 'example.com/trace': 'abc' }, 'fixture/label': 'alpha' });
    }
  });

  it('relays completion/complete, with prompt and template references mapped to the owning server', async () => {
    const pinned = await connect('beta');
    const direct = await pinned.client.complete({ ref: { type: 'ref/prompt', name: 'pick' }, argument: { name: 'person', value: 'Al' } });
    expect(direct.completion.values).toEqual(['Alice@beta', 'Alan@beta']);
    const { client } = await connect('both');
    const prompt = await client.complete({ ref: { type: 'ref/prompt', name: 'beta_pick' }, argument: { name: 'person', value: 'B' } });
    expect(prompt.completion.values).toEqual(['Bob@beta']);
    const template = await client.complete({
      ref: { type: 'ref/resource', uri: 'fixture://alpha/items/{id}' },
      argument: { name: 'id', value: 'A' },
    });
    expect(template.completion.values).toEqual(['Alice@alpha', 'Alan@alpha']);
    const unknown = await rejectionOf(client.complete({ ref: { type: 'ref/prompt', name: 'nope' }, argument: { name: 'x', value: '' } }));
    expect(unknown).toBeInstanceOf(McpError);
  });

  it('relays resources/subscribe and unsubscribe, and routes resources/updated to the subscribed session', async () => {
    const before = alpha.subscriptionCount();
    const subscriber = await connect('both');
    const other = await connect('both');
    await subscriber.client.subscribeResource({ uri: 'fixture://alpha/readme' });
    await subscriber.client.subscribeResource({ uri: 'fixture://alpha/readme' });
    expect(alpha.subscriptionCount()).toBe(before + 1);
    // Another session's call makes the upstream announce the update to the subscribed session only.
    expect(textOf(await other.client.callTool({ name: 'touch', arguments: {} }))).toBe('alpha: touched 1');
    await waitUntil(() => subscriber.updated.length >= 1);
    expect(subscriber.updated).toEqual(['fixture://alpha/readme']);
    expect(other.updated).toEqual([]);
    await subscriber.client.unsubscribeResource({ uri: 'fixture://alpha/readme' });
    expect(alpha.subscriptionCount()).toBe(before);
    expect(textOf(await other.client.callTool({ name: 'touch', arguments: {} }))).toBe('alpha: touched 0');
  });

  it('announces a member list change to the sessions that see it, pinned and virtual', async () => {
    const pinned = await connect('beta');
    const virtual = await connect('both');
    const unrelated = await connect('alpha');
    beta.addTool('late');
    await waitUntil(() => pinned.changes.includes('tools') && virtual.changes.includes('tools'));
    expect((await virtual.client.listTools()).tools.map((tool) => tool.name)).toContain('late');
    await sleep(200);
    expect(unrelated.changes).toEqual([]);
  });

  it('lists unique names bare on a virtual server, prefixes shared ones, and keeps prefixed names working', async () => {
    const { client } = await connect('both');
    const tools = (await client.listTools()).tools.map((tool) => tool.name);
    expect(tools).toEqual(expect.arrayContaining(['sleep', 'add', 'progress', 'alpha_echo', 'beta_echo']));
    expect(tools).not.toContain('alpha_sleep');
    expect(tools).not.toContain('echo');
    expect((await client.listPrompts()).prompts.map((prompt) => prompt.name)).toEqual([
      'alpha_greeting',
      'alpha_pick',
      'beta_greeting',
      'beta_pick',
    ]);
    expect(textOf(await client.callTool({ name: 'beta_add', arguments: { a: 1, b: 1 } }))).toBe('beta: 2');
    expect(textOf(await client.callTool({ name: 'add', arguments: { a: 2, b: 1 } }))).toBe('beta: 3');
  });
});

describe('MCP upstream session bounds', () => {
  let fixture: McpFixture;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    fixture = await startMcpFixture({ label: 'slow', tools: ['echo', 'sleep'] });
    gateway = await startGateway({
      configYaml: `mcp:\n  servers:\n    slow: { url: "${fixture.url}" }\n`,
      env: { MASTER_KEY, MCP_MAX_UPSTREAM_SESSIONS_PER_SERVER: '1', MCP_UPSTREAM_SESSION_IDLE_SECONDS: '1' },
    });
    await waitForConnected(gateway, ['slow']);
  });

  afterAll(async () => {
    await gateway?.stop();
    await fixture?.close();
  });

  it('refuses with a JSON-RPC error when every upstream session of a server is busy, reuses idle ones, and closes idle ones', async () => {
    const connect = async () => {
      const transport = new StreamableHTTPClientTransport(new URL(`${gateway.url}/mcp/slow`), {
        requestInit: { headers: { authorization: `Bearer ${MASTER_KEY}` } },
      });
      const client = new Client({ name: 'bounds', version: '1.0.0' });
      await client.connect(transport);
      return client;
    };
    const first = await connect();
    const second = await connect();
    const busy = first.callTool({ name: 'sleep', arguments: { ms: 1500 } });
    await waitUntil(() => fixture.sessionCount() === 2);
    const refused = await rejectionOf(second.callTool({ name: 'echo', arguments: { text: 'x' } }));
    expect(refused).toBeInstanceOf(McpError);
    expect((refused as McpError).code).toBe(-32029);
    expect((refused as McpError).message).toContain(
      'mcp server "slow" has all its 1 upstream sessions in use (mcp.max_upstream_sessions_per_server): try again later',
    );
    expect(textOf(await busy)).toBe('slow: slept 1500 ms');
    // The first session's upstream session is idle now: it makes way.
    expect(textOf(await second.callTool({ name: 'echo', arguments: { text: 'y' } }))).toBe('slow: y');
    expect(fixture.sessionCount()).toBe(2);
    // Idle for a second: closed (the shared session that lists the catalog stays).
    await waitUntil(() => fixture.sessionCount() === 1, 5_000);
    expect(textOf(await second.callTool({ name: 'echo', arguments: { text: 'z' } }))).toBe('slow: z');
    await Promise.all([first.close(), second.close()]);
  });
});
