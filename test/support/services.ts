import { inject } from 'vitest';

import type { TestServices } from './service-probes.ts';
import './global-setup.ts';

export { chromiumPath, testPostgresUrl, testRedisUrl } from './service-probes.ts';

/**
 * The optional services this run can use, as the global setup found them (every one in CI).
 * Suites that need one use `describe.skipIf(!testServices.postgres)` or filter their backends.
 * Without the global setup (another config), every service counts as present.
 */
export const testServices: TestServices = inject('testServices') ?? { postgres: true, redis: true, redisServer: true, chromium: true };
