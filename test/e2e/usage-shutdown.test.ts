import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { gatewayEnv, type GatewayProcess, startGateway } from '../support/gateway-process.ts';
import { bearer, chatBody } from '../support/http.ts';
import { type MockUpstream, startMockUpstream } from '../support/mock-upstream.ts';
import { backendNames, createGatewayDatabase, type GatewayDatabase } from '../support/storage.ts';

// README "Usage tracking": records are written in batches and flushed on shutdown. A SIGTERM
// in the middle of a load must not lose the record of any request that got its 200.

const totalRequests = 200;
const concurrency = 20;
/** SIGTERM once this many requests have completed (slow ones are then still running). */
const signalAfter = 50;

/** A third each: JSON answers after 200 ms, streams of about 100 ms, immediate JSON answers. */
type RequestKind = 'slow' | 'stream' | 'fast';
const kinds: readonly RequestKind[] = ['slow', 'stream', 'fast'];

function bodyOf(kind: RequestKind): string {
  return JSON.stringify(kind === 'slow' ? chatBody('slow') : chatBody('mock-model', kind === 'stream' ? { stream: true } : {}));
}

/** A 200 that carries a whole answer: a chat.completion, or a stream up to `data: [DONE]`. */
function isComplete(kind: RequestKind, status: number, text: string): boolean {
  if (status !== 200) return false;
  return kind === 'stream' ? text.endsWith('data: [DONE]\n\n') : text.includes('"chat.completion"');
}

interface LoadResult {
  /** X-Request-ID of every complete 200, with whether it arrived after the signal. */
  completed: Array<{ requestId: string; afterSignal: boolean; kind: RequestKind }>;
  /** Statuses other than 200 (503 while draining) and transport errors (connection refused). */
  refused: number;
  inFlightAtSignal: number;
}

async function loadThenSigterm(gateway: GatewayProcess): Promise<{ load: LoadResult; exitCode: number | null }> {
  const dispatcher = new Agent({ connections: concurrency });
  const load: LoadResult = { completed: [], refused: 0, inFlightAtSignal: 0 };
  let next = 0;
  let inFlight = 0;
  let stopping: Promise<number | null> | null = null;
  const worker = async (): Promise<void> => {
    while (next < totalRequests) {
      const index = next++;
      const kind = kinds[index % kinds.length] ?? 'fast';
      inFlight += 1;
      try {
        const response = await request(`${gateway.url}/v1/chat/completions`, {
          method: 'POST',
          dispatcher,
          headers: { ...bearer(), 'content-type': 'application/json', 'x-user-path': `/load/${index % 4}` },
          body: bodyOf(kind),
        });
        const text = await response.body.text();
        if (isComplete(kind, response.statusCode, text)) {
          load.completed.push({ requestId: String(response.headers['x-request-id']), afterSignal: stopping !== null, kind });
        } else {
          load.refused += 1;
        }
      } catch {
        load.refused += 1;
      } finally {
        inFlight -= 1;
      }
      if (stopping === null && load.completed.length >= signalAfter) {
        load.inFlightAtSignal = inFlight;
        stopping = gateway.stop('SIGTERM');
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  await dispatcher.destroy();
  const exitCode = await (stopping ?? gateway.stop('SIGTERM'));
  return { load, exitCode };
}

describe.each(backendNames)('SIGTERM during load on %s', (backendName) => {
  let mock: MockUpstream;
  let database: GatewayDatabase;

  beforeAll(async () => {
    mock = await startMockUpstream({ chunkDelayMs: 20 });
    database = await createGatewayDatabase(backendName);
  });

  afterAll(async () => {
    await database?.dispose();
    await mock?.close();
  });

  it('exits 0 and keeps a usage record for every request that got a 200', async () => {
    const gateway = await startGateway({ env: gatewayEnv(mock, { OPENAI_MODELS: 'mock-model,slow', ...database.env }) });
    const { load, exitCode } = await loadThenSigterm(gateway);
    expect(exitCode, gateway.output.slice(-20).join('\n')).toBe(0);
    // The signal really came during the load: requests were running and some finished after it.
    expect(load.inFlightAtSignal).toBeGreaterThan(0);
    const afterSignal = load.completed.filter((entry) => entry.afterSignal);
    expect(afterSignal.some((entry) => entry.kind === 'slow')).toBe(true);
    expect(afterSignal.some((entry) => entry.kind === 'stream')).toBe(true);
    expect(load.completed.length + load.refused).toBe(totalRequests);
    expect(load.completed.length).toBeGreaterThanOrEqual(signalAfter);
    expect(new Set(load.completed.map((entry) => entry.requestId)).size).toBe(load.completed.length);

    const storage = await database.open(gateway);
    try {
      const missing: string[] = [];
      for (const { requestId, kind } of load.completed) {
        const [record, ...extra] = await storage.usage.findByRequestId(requestId);
        const expected = record?.status === 200 && record.totalTokens === 17 && record.stream === (kind === 'stream');
        if (!expected || extra.length > 0) missing.push(`${kind} ${requestId}`);
      }
      expect(missing, `usage records lost or wrong (${missing.length} of ${load.completed.length})`).toEqual([]);
      const totals = await storage.usage.totals({ from: 0, to: Date.now() + 60_000, userPath: '/load' });
      expect(totals.requests).toBeGreaterThanOrEqual(load.completed.length);
    } finally {
      await storage.close();
    }
    const logs = gateway.logs();
    expect(logs.some((line) => line['msg'] === 'shutdown complete')).toBe(true);
    expect(logs.filter((line) => /usage records could not be written|usage buffer full/.test(String(line['msg'])))).toEqual([]);
  });
});
