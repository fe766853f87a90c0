import { afterEach, beforeEach } from 'vitest';
import type { UsageRecord } from '../../usage/usage-store.ts';
import type { RequestLogEntry } from '../../request-log/request-log-store.ts';
import type { Storage } from '../storage.ts';
import type { StorageBackend, StorageLocation } from './storage-backends.ts';

/** 2026-01-01T00:00:00.000Z */
export const baseTime = Date.UTC(2026, 0, 1);

let sequence = 0;

/** A complete usage record; every field can be overridden. */
export function usageRecord(overrides: Partial<UsageRecord> = {}): UsageRecord {
  sequence += 1;
  return {
    id: `record-${sequence}-${Math.random().toString(36).slice(2)}`,
    requestId: `request-${sequence}`,
    timestamp: baseTime + sequence,
    userPath: '/team/app',
    apiKeyId: 'key-1',
    endpoint: '/v1/chat/completions',
    provider: 'openai',
    model: 'gpt-4o-mini',
    promptTokens: 10,
    completionTokens: 5,
    totalTokens: 15,
    usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
    costUsd: 0.001,
    cacheHit: false,
    stream: false,
    status: 200,
    latencyMs: 120,
    ...overrides,
  };
}

export interface FreshStorage {
  readonly storage: Storage;
  readonly location: StorageLocation;
}

/** Registers hooks that give each test an empty, migrated database of `backend`, removed afterwards. */
export function useFreshStorage(backend: StorageBackend): () => FreshStorage {
  let current: FreshStorage | undefined;
  beforeEach(async () => {
    const location = await backend.createLocation();
    current = { location, storage: await location.open() };
  });
  afterEach(async () => {
    const finished = current;
    current = undefined;
    await finished?.storage.close();
    await finished?.location.dispose();
  });
  return () => {
    if (current === undefined) throw new Error('useFreshStorage: no storage outside a test');
    return current;
  };
}

let logSequence = 0;

/** A complete entry; every field can be overridden. Row ids sort with their time. */
export function requestLogEntry(overrides: Partial<RequestLogEntry> = {}): RequestLogEntry {
  logSequence += 1;
  const time = overrides.time ?? baseTime + logSequence;
  return {
    rowId: `${String(time).padStart(15, '0')}-${String(logSequence).padStart(6, '0')}`,
    id: `request-${logSequence}`,
    time,
    userPath: '/team/app',
    apiKeyId: 'key-1',
    endpoint: '/v1/chat/completions',
    modelRequested: 'gpt-4o-mini',
    virtualModel: null,
    attempts: [{ provider: 'openai', model: 'gpt-4o-mini', status: 200, latencyMs: 12.5, errorCode: null }],
    provider: 'openai',
    model: 'gpt-4o-mini',
    status: 200,
    errorType: null,
    errorCode: null,
    rateLimit: null,
    latencyMs: 15.25,
    ttftMs: null,
    promptTokens: 10,
    completionTokens: 5,
    totalTokens: 15,
    costUsd: 0.001,
    cacheHit: false,
    stream: false,
    userAgent: 'test/1.0',
    requestBody: null,
    responseBody: null,
    guardrails: null,
    ...overrides,
  };
}
