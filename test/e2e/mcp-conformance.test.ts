import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  checkRatchet,
  formatReport,
  gatewayTargets,
  readRatchet,
  runConformance,
  startConformanceEnvironment,
  suites,
  type ConformanceEnvironment,
  type ConformanceReport,
  type SuiteName,
} from '../../scripts/mcp-conformance.ts';

// The official MCP conformance suite (both pinned releases, server scenarios) against our
// conformance upstream straight and through the gateway: /mcp/conf, the virtual server
// conf-solo [conf] and conf-pair [conf, second]. Every scenario must pass straight; through each
// gateway target, every scenario the ratchet (mcp-conformance-expected.json) lists must pass.
// `npm run mcp:conformance -- --diff` shows what still differs; `-- --update` ratchets.

describe('MCP conformance suite through the gateway', () => {
  let environment: ConformanceEnvironment;
  let report: ConformanceReport;

  beforeAll(async () => {
    environment = await startConformanceEnvironment();
    report = await runConformance(environment.urls);
  }, 400_000);

  afterAll(async () => {
    await environment?.close();
  });

  it('passes every scenario straight against the conformance upstream', () => {
    for (const suite of Object.keys(suites) as SuiteName[]) {
      const failing = [...report[suite].straight].filter(([, passed]) => !passed).map(([scenario]) => scenario);
      expect(failing, `${suite}:\n${formatReport(report)}`).toEqual([]);
      expect(report[suite].straight.size).toBeGreaterThanOrEqual(30);
    }
  });

  it('passes through every gateway target each scenario the ratchet lists', () => {
    const ratchet = readRatchet();
    for (const suite of Object.keys(suites) as SuiteName[]) {
      for (const target of gatewayTargets) {
        // A ratchet entry must be a scenario that passes straight (no stale names).
        const straight = report[suite].straight;
        expect(ratchet[suite][target].filter((scenario) => straight.get(scenario) !== true)).toEqual([]);
      }
    }
    const { regressions } = checkRatchet(report, ratchet);
    expect(regressions, formatReport(report)).toEqual([]);
  });
});
