import { defineConfig } from 'vitest/config';

// Runs the vendored openai-node api-resource tests (written for jest) with vitest: jest's globals
// (`describe`, `test`, `it`, `expect`, `beforeEach`, `afterEach`) are vitest's globals, and
// jest-adapter.ts gives them `jest.spyOn` / `jest.restoreAllMocks`. Only
// scripts/openai-sdk-conformance.ts runs this configuration (with TEST_API_BASE_URL set); the
// project's own vitest.config.ts excludes this folder.
// eslint-disable-next-line no-restricted-syntax -- vitest reads the default export
export default defineConfig({
  root: import.meta.dirname,
  test: {
    include: ['api-resources/**/*.test.ts'],
    globals: true,
    setupFiles: ['./jest-adapter.ts'],
    testTimeout: 30_000,
    // One worker process for all files, without re-importing the SDK per file: a tenth of the CPU.
    pool: 'threads',
    isolate: false,
    maxWorkers: 2,
  },
});
