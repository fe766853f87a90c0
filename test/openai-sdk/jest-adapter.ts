import { appendFileSync } from 'node:fs';

import { expect, vi } from 'vitest';

// Setup file of the vendored openai-node api-resource tests (vitest.config.ts beside this file).
//
// - They are written for jest: `describe`, `test`, `it`, `expect` and the hooks are vitest's
//   globals; `jest.spyOn` and `jest.restoreAllMocks` (webhooks.test.ts) are vitest's `vi`.
// - jest's `toThrowErrorMatchingInlineSnapshot` stores the error's message as a string; vitest
//   prints the Error object. The serializer below prints an Error as jest does.
// - Each test file builds its client with the literal key 'My API Key'. With
//   OPENAI_SDK_TEST_API_KEY set, that bearer is replaced with it (a managed key of the gateway).
// - With OPENAI_SDK_TEST_LOG set, every request appends one JSON line there: the test, method,
//   path, status and the error's `code` (scripts/openai-sdk-conformance.ts reads it).

Object.assign(globalThis, { jest: vi });

expect.addSnapshotSerializer({
  test: (value: unknown) => value instanceof Error,
  serialize: (value: Error, config, indentation, depth, refs, printer) => printer(value.message, config, indentation, depth, refs),
});

const apiKey = process.env['OPENAI_SDK_TEST_API_KEY'];
const logPath = process.env['OPENAI_SDK_TEST_LOG'];
const wrapped = Symbol.for('openai-sdk-conformance.fetch');
const originalFetch = globalThis.fetch;

async function errorCode(response: Response): Promise<string | null> {
  if (response.status < 400) return null;
  try {
    const body = (await response.clone().json()) as { error?: { code?: unknown } };
    return typeof body.error?.code === 'string' ? body.error.code : null;
  } catch {
    return null;
  }
}

async function loggingFetch(input: string | URL | Request, init?: RequestInit): Promise<Response> {
  const headers = new Headers(init?.headers);
  if (apiKey !== undefined && headers.has('authorization')) headers.set('authorization', `Bearer ${apiKey}`);
  const response = await originalFetch(input, { ...init, headers });
  if (logPath !== undefined) {
    const { currentTestName, testPath } = expect.getState();
    const url = new URL(input instanceof Request ? input.url : input);
    const line = {
      file: testPath,
      test: currentTestName,
      method: init?.method ?? 'GET',
      path: url.pathname,
      status: response.status,
      code: await errorCode(response),
    };
    appendFileSync(logPath, `${JSON.stringify(line)}\n`);
  }
  return response;
}

// Without isolation, this file runs once per test file in the same worker: wrap fetch once.
if (!(wrapped in originalFetch)) globalThis.fetch = Object.assign(loggingFetch, { [wrapped]: true });
