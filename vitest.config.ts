import { configDefaults, defineConfig } from 'vitest/config';
import { SummaryReporter } from './test/support/summary-reporter.ts';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    // The vendored openai-node api-resource tests run only through scripts/openai-sdk-conformance.ts
    // (test/e2e/openai-sdk-resources.test.ts), against a mock, with their own configuration.
    exclude: [...configDefaults.exclude, 'test/openai-sdk/**'],
    // A 2-core machine shared by several runs: a gateway start alone can take tens of seconds.
    testTimeout: 60_000,
    hookTimeout: 90_000,
    // Probes PostgreSQL, Redis, redis-server and Chromium once; outside CI, suites whose
    // service is missing are skipped with one printed line each (test/support/services.ts).
    globalSetup: ['./test/support/global-setup.ts'],
    // End-to-end suites start real servers on free ports; two cores, so keep parallelism modest.
    maxWorkers: 2,
    reporters: ['default', new SummaryReporter()],
  },
});
