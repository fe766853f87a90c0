import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { RequestLogEntry } from '../../src/request-log/request-log-store.ts';
import type { Storage } from '../../src/storage/storage.ts';
import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { call, chatBody } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { type BackendName, createGatewayDatabase, type GatewayDatabase } from '../support/storage.ts';

// Issue 16: request log entries are written in batches off the request path and nothing is
// lost on shutdown; bodies are kept per REQUEST_LOG_BODIES, capped and redacted. The flush
// interval is a minute here, so every entry read below was written by the shutdown flush.

const cases: ReadonlyArray<{ backend: BackendName; bodies: 'all' | 'off' }> = [
  { backend: 'postgresql', bodies: 'all' },
  { backend: 'sqlite', bodies: 'off' },
];

describe.each(cases)('request log on $backend with bodies $bodies: shutdown flush', ({ backend, bodies }) => {
  let mock: MockUpstream;
  let database: GatewayDatabase;
  let gateway: GatewayProcess;
  let storage: Storage | undefined;

  beforeAll(async () => {
    mock = await startMockUpstream();
    database = await createGatewayDatabase(backend);
    const env = { ...database.env, USAGE_FLUSH_INTERVAL_MS: '60000', REQUEST_LOG_BODY_MAX_BYTES: '300' };
    gateway = await startGateway({ env: gatewayEnv(mock, bodies === 'off' ? env : { ...env, REQUEST_LOG_BODIES: bodies }) });
  }, 60_000);

  afterAll(async () => {
    await gateway?.stop();
    await storage?.close();
    await database?.dispose();
    await mock?.close();
  });

  it('writes every entry on SIGTERM; bodies kept as configured, capped, secrets redacted', async () => {
    const send = async (body: unknown): Promise<string> => {
      const reply = await call(gateway, '/v1/chat/completions', { body, headers: { 'x-user-path': '/flush' } });
      expect(reply.status, reply.text).toBe(200);
      return String(reply.headers['x-request-id']);
    };
    const small = await send({ ...chatBody('mock-model'), user: 'u1', metadata: { password: 'hunter2' } });
    const large = await send(chatBody('mock-model', { messages: [{ role: 'user', content: 'x'.repeat(2_000) }] }));
    const stream = await send(chatBody('mock-model', { stream: true }));
    const quick = await Promise.all(Array.from({ length: 20 }, () => send(chatBody('mock-model'))));
    // Nothing is written before the flush interval or the shutdown.
    const listed = await call(gateway, '/admin/requests?user_path=/flush');
    expect(JSON.parse(listed.text)).toEqual({ requests: [], next_cursor: null });

    expect(await gateway.stop('SIGTERM')).toBe(0);
    storage = await database.open(gateway);
    const find = async (id: string): Promise<RequestLogEntry> => {
      const entry = await storage?.requestLog.find(id);
      expect(entry, `entry ${id}`).toBeTruthy();
      return entry as RequestLogEntry;
    };
    for (const id of quick) expect((await find(id)).status).toBe(200);
    const page = await storage.requestLog.list({ limit: 100, userPath: '/flush' });
    expect(page.entries).toHaveLength(23);

    const smallEntry = await find(small);
    const largeEntry = await find(large);
    const streamEntry = await find(stream);
    expect(streamEntry).toMatchObject({ stream: true, totalTokens: 17 });
    if (bodies === 'off') {
      for (const entry of [smallEntry, largeEntry, streamEntry]) expect([entry.requestBody, entry.responseBody]).toEqual([null, null]);
      return;
    }
    expect(JSON.parse(smallEntry.requestBody ?? 'null')).toMatchObject({ user: 'u1', metadata: { password: '[REDACTED]' } });
    expect(smallEntry.requestBody).not.toContain('hunter2');
    // The answer (about 500 bytes) is kept up to the cap.
    expect(smallEntry.responseBody).toContain('"object":"chat.completion"');
    expect(smallEntry.responseBody).toMatch(/…\[truncated \d+ bytes\]$/);
    expect(largeEntry.requestBody).toMatch(/…\[truncated \d+ bytes\]$/);
    expect(Buffer.byteLength((largeEntry.requestBody ?? '').replace(/…\[truncated \d+ bytes\]$/, ''))).toBe(300);
    // A stream's body is not kept (it is relayed, not held).
    expect(streamEntry.responseBody).toBeNull();
  });
});
