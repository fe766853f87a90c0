import { defineConfig } from 'vitest/config';
import { SummaryReporter } from './test/support/summary-reporter.ts';

export default defineConfig({
  test: {
    include: ['src/**/*.test.ts', 'test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // End-to-end suites start real servers on free ports; two cores, so keep parallelism modest.
    maxWorkers: 2,
    reporters: ['default', new SummaryReporter()],
  },
});
