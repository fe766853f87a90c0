import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import {
  checkRatchet,
  formatReport,
  gatewayTargets,
  readRatchet,
  runConformance,
  searchTargets,
  startConformanceEnvironment,
  suites,
  type ConformanceEnvironment,
  type ConformanceReport,
  type SuiteName,
} from '../../scripts/mcp-conformance.ts';
import { conformanceTools } from '../support/mcp-conformance-catalog.ts';

// The official MCP conformance suite (both pinned releases, server scenarios) against our
// conformance upstream straight and through the gateway: /mcp/conf, the virtual server
// conf-solo [conf] and conf-pair [conf, second]. Every scenario must pass straight; through each
// gateway target, every scenario the ratchet (mcp-conformance-expected.json) lists must pass. In
// tool discovery `search` mode (/mcp/conf of a gateway with MCP_TOOL_DISCOVERY=search, and the
// virtual server conf-search) every scenario must pass but those the ratchet's `search_by_design`
// lists with the reason.
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

  it('in search mode, passes every scenario that passes straight but those listed by design', () => {
    const ratchet = readRatchet();
    const scenarios = new Set(Object.values(report).flatMap((targets) => [...targets.straight.keys()]));
    // Each by-design entry names a scenario the suites run (no stale names) and says why.
    for (const [scenario, reason] of Object.entries(ratchet.search_by_design)) {
      expect(scenarios.has(scenario), scenario).toBe(true);
      expect(reason.length).toBeGreaterThan(20);
    }
    expect(checkRatchet(report, ratchet).unexplained, formatReport(report)).toEqual([]);
  });

  it('in search mode, search_tools gives the JSON Schema 2020-12 tool with its schema as the upstream lists it', async () => {
    // What json-schema-2020-12 checks in tools/list is reachable through search_tools.
    const expected = conformanceTools.find((tool) => tool.name === 'json_schema_2020_12_tool');
    for (const target of searchTargets) {
      const client = new Client({ name: 'search-check', version: '1.0.0' });
      await client.connect(new StreamableHTTPClientTransport(new URL(environment.urls[target])));
      try {
        expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['call_tool', 'search_tools']);
        const result = await client.callTool({ name: 'search_tools', arguments: { query: 'json_schema_2020_12_tool', limit: 1 } });
        const content = result.content as Array<{ type: string; text?: string }>;
        const found = JSON.parse(content[0]?.text ?? '{}') as { tools: Array<{ name: string; inputSchema: unknown }> };
        expect(found.tools[0], target).toEqual(
          expect.objectContaining({ name: 'json_schema_2020_12_tool', inputSchema: expected?.inputSchema }),
        );
      } finally {
        await client.close();
      }
    }
  });
});
