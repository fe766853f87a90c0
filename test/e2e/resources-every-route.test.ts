import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { catalogue, ownedParameters, ownedTypes, type OwnedTypeName } from '../../src/gateway/relay/openai-resources.ts';
import { expectEnvelope } from '../support/envelopes.ts';
import { type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call, callJson, type RawReply } from '../support/http.ts';
import { type MockRequest, type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { sendJson } from '../support/upstream.ts';

// Every route of the owned catalogue (src/gateway/relay/openai-resources.ts), driven from the
// catalogue itself so a new line is covered the day it is added: tenant A creates one resource
// of each type that has a create route; for every route that names an owned id, tenant B gets
// 404 `<resource>_not_found` for A's id and nothing reaches the upstream, while A's own call is
// relayed; every top-level listing B reads leaves A's resources out (ADR 40).

/** Fastify's parameter names of a catalogue path, in order (`*` included). */
const parametersOf = (path: string): string[] =>
  path
    .split('/')
    .filter((segment) => segment.startsWith(':') || segment === '*')
    .map((segment) => segment.replace(/^:/, ''));

describe('the owned catalogue, route by route: another tenant’s ids answer like unknown ones', () => {
  let mock: MockUpstream;
  let gateway: GatewayProcess;
  const calls: MockRequest[] = [];
  const keys = { a: '', b: '' };
  /** A's resource of each type that has a top-level create route. */
  const mine = new Map<OwnedTypeName, string>();

  beforeAll(async () => {
    mock = await startMockUpstream();
    let next = 0;
    for (const method of ['GET', 'POST', 'DELETE']) {
      mock.route(method, '/*', (request, response) => {
        calls.push(request);
        next += 1;
        if (request.method === 'GET' && !/\/[a-z]+_[0-9]+$|\/child$|content$/.test(request.path)) {
          return sendJson(response, 200, { object: 'list', data: [], has_more: false });
        }
        // A read answers the object it names; a create a new one.
        const id = request.method === 'POST' ? `obj_${next}` : decodeURIComponent(request.path.split('/').at(-1) as string);
        sendJson(response, 200, { id, object: 'object', thread_id: `thread_${next}`, deleted: true });
      });
    }
    const configYaml = `
providers:
  openai: { type: openai, api_key: sk-openai, base_url: "${mock.url}", models: [gpt-4o-mini] }
`;
    gateway = await startGateway({ env: { MASTER_KEY: 'every-route-master-key' }, configYaml });
    const key = async (name: string, userPath: string): Promise<string> =>
      String(
        (await callJson(gateway, '/admin/api-keys', 201, { token: 'every-route-master-key', body: { name, user_path: userPath } }))['key'],
      );
    keys.a = await key('tenant-a', '/tenants/a');
    keys.b = await key('tenant-b', '/tenants/b');
    for (const route of catalogue) {
      const typeName = route.records?.['id'];
      if (route.method !== 'POST' || typeName === undefined || route.path.includes(':') || mine.has(typeName)) continue;
      const reply = await call(gateway, route.path, { token: keys.a, method: 'POST', body: {} });
      expect(reply.status, `${route.path}: ${reply.text}`).toBe(200);
      mine.set(typeName, (JSON.parse(reply.text) as { id: string }).id);
    }
  });

  afterAll(async () => {
    await gateway?.stop();
    await mock?.close();
  });

  const send = (tenant: keyof typeof keys, method: string, path: string): Promise<RawReply> =>
    call(gateway, path, {
      token: keys[tenant],
      method: method as 'GET' | 'POST' | 'DELETE',
      ...(method === 'POST' ? { body: {} } : {}),
    });

  /** The path with A's id for each owned parameter (an id nobody created where A has none) and a child id for the rest. */
  const pathFor = (pattern: string): { path: string; allMine: boolean } => {
    let allMine = true;
    const path = pattern
      .split('/')
      .map((segment) => {
        if (!segment.startsWith(':') && segment !== '*') return segment;
        const typeName = ownedParameters[segment.replace(/^:/, '')];
        if (typeName === undefined) return 'child_1';
        const id = mine.get(typeName);
        if (id === undefined) allMine = false;
        return encodeURIComponent(id ?? `unknown_${typeName}`);
      })
      .join('/');
    return { path, allMine };
  };

  it('creates one resource of every type that has a create route', () => {
    expect([...mine.keys()].sort()).toEqual(
      expect.arrayContaining(['assistant', 'thread', 'vector_store', 'conversation', 'eval', 'container', 'video', 'skill', 'upload']),
    );
  });

  it('B: every route naming A’s id is 404 <resource>_not_found with nothing sent upstream; A: relayed', async () => {
    const routes = catalogue.filter((route) => parametersOf(route.path).some((name) => ownedParameters[name] !== undefined));
    expect(routes.length).toBeGreaterThan(80);
    for (const route of routes) {
      const { path, allMine } = pathFor(route.path);
      const first = parametersOf(route.path).find((name) => ownedParameters[name] !== undefined) as string;
      const code = ownedTypes[ownedParameters[first] as OwnedTypeName].notFoundCode;
      const before = calls.length;
      const hidden = await send('b', route.method, path);
      expect(hidden.status, `B ${route.method} ${path}: ${hidden.text}`).toBe(404);
      expectEnvelope(hidden, { status: 404, type: 'not_found_error', code });
      expect(calls.length, `B ${route.method} ${path} reached the upstream`).toBe(before);
      if (!allMine || route.deletes === true) continue;
      const relayed = await send('a', route.method, path);
      expect(relayed.status, `A ${route.method} ${path}: ${relayed.text}`).toBe(200);
      expect(calls.length, `A ${route.method} ${path} was not relayed`).toBeGreaterThan(before);
    }
  });

  it('B’s top-level listings leave every one of A’s resources out; A’s show them', async () => {
    for (const route of catalogue.filter((entry) => entry.lists !== undefined)) {
      const typeName = route.lists as OwnedTypeName;
      const listed = async (tenant: keyof typeof keys): Promise<string[]> => {
        const reply = await send(tenant, 'GET', route.path);
        expect(reply.status, `${tenant} GET ${route.path}: ${reply.text}`).toBe(200);
        return (JSON.parse(reply.text) as { data: { id?: string }[] }).data.map((item) => String(item.id));
      };
      expect(await listed('b'), route.path).toEqual([]);
      if (mine.has(typeName)) expect(await listed('a'), route.path).toContain(mine.get(typeName));
    }
  });

  it('deletes: B cannot delete A’s; A can, and then B and A both get the unknown-id answer', async () => {
    for (const route of catalogue.filter((entry) => entry.deletes === true && parametersOf(entry.path).length === 1)) {
      const { path, allMine } = pathFor(route.path);
      if (!allMine) continue;
      const typeName = ownedParameters[parametersOf(route.path)[0] as string] as OwnedTypeName;
      const code = ownedTypes[typeName].notFoundCode;
      expectEnvelope(await send('b', 'DELETE', path), { status: 404, type: 'not_found_error', code });
      expect((await send('a', 'DELETE', path)).status, path).toBe(200);
      expectEnvelope(await send('a', 'GET', path), { status: 404, type: 'not_found_error', code });
    }
  });
});
