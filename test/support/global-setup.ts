import type { TestProject } from 'vitest/node';

import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

import { killAlive, orphansRunning } from './process-tree.ts';
import { missingServiceLines, probeServices, type TestServices } from './service-probes.ts';

const gatewayEntryPoint = join(resolve(import.meta.dirname, '..', '..'), 'dist', 'main.js');

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

/**
 * The last safety net: gateways of this checkout started by the tests (their cwd is a
 * `gateway-test-` folder) that lost their test process (orphans of init) are killed and named.
 * The harness should never leave one (gateway-process.ts); a gateway started by hand is left alone.
 */
export function teardown(): void {
  if (!existsSync('/proc')) return;
  const killed = killAlive(orphansRunning(gatewayEntryPoint, join(tmpdir(), 'gateway-test-')));
  if (killed.length > 0) console.warn(`killed ${killed.length} gateway process(es) left behind by the tests: ${killed.join(', ')}`);
}
