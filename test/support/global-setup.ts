import type { TestProject } from 'vitest/node';

import { missingServiceLines, probeServices, type TestServices } from './service-probes.ts';

declare module 'vitest' {
  export interface ProvidedContext {
    testServices: TestServices;
  }
}

/**
 * Probes PostgreSQL, Redis, redis-server and Chromium once per run. Outside CI a suite whose
 * service is missing is skipped, with one printed line per service saying what to install;
 * in CI (CI=true or REQUIRE_SERVICES=true, as .ci/run sets) every suite runs, and fails loudly.
 */
export async function setup(project: TestProject): Promise<void> {
  const found = await probeServices();
  const required = process.env['CI'] === 'true' || process.env['REQUIRE_SERVICES'] === 'true';
  for (const line of missingServiceLines(found)) {
    console.warn(required ? `REQUIRE_SERVICES: these will fail: ${line}` : `skipping ${line} (see README "Tests")`);
  }
  project.provide('testServices', required ? { postgres: true, redis: true, redisServer: true, chromium: true } : found);
}
