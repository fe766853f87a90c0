import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';

import { startGateway, type GatewayProcess } from '../test/support/gateway-process.ts';
import { startConformanceServer, type ConformanceServer } from '../test/support/mcp-conformance-server.ts';
import { startMcpFixture, type McpFixture } from '../test/support/mcp-fixture-server.ts';

// Runs the official MCP conformance suite's server scenarios (npm @modelcontextprotocol/conformance,
// pinned in package.json: the stable release, and the 0.2 alpha at spec 2025-11-25 as
// `mcp-conformance-next`) against our conformance upstream straight, and through the gateway:
// `/mcp/conf` pinned to it, a virtual server over it, a virtual server with a second member, and
// in tool discovery `search` mode: `/mcp/conf` of a second gateway (MCP_TOOL_DISCOVERY=search) and
// a virtual server with `tool_discovery: search` over both members.
//
//   npm run mcp:conformance            table of every target, and the ratchet check
//   npm run mcp:conformance -- --diff  also each scenario that passes straight but not through a target
//   npm run mcp:conformance -- --update  rewrite the ratchet file with what passes now
//   npm run mcp:conformance -- --upstream http://127.0.0.1:3000/mcp
//                                      another upstream instead of ours (e.g. the suite's reference
//                                      server, started by hand); the ratchet is only reported
//
// The ratchet file (test/e2e/mcp-conformance-expected.json) lists, per suite and gateway target,
// the scenarios that must pass through the gateway, and the scenarios that differ by design in
// search mode (with the reason); test/e2e/mcp-conformance.test.ts enforces it. Nothing is
// downloaded: the suites run from node_modules.

const projectRoot = resolve(import.meta.dirname, '..');
export const ratchetPath = join(projectRoot, 'test', 'e2e', 'mcp-conformance-expected.json');
const preload = pathToFileURL(join(import.meta.dirname, 'conformance-node20.mjs')).href;
const runTimeoutMs = 180_000;

export const suites = {
  stable: { package: '@modelcontextprotocol/conformance', args: ['--suite', 'all'] },
  next: { package: 'mcp-conformance-next', args: ['--suite', 'all', '--spec-version', '2025-11-25'] },
} as const;
export type SuiteName = keyof typeof suites;
export const gatewayTargets = ['pinned', 'virtual', 'pair', 'search-pinned', 'search-virtual'] as const;
export type GatewayTarget = (typeof gatewayTargets)[number];
export type TargetName = 'straight' | GatewayTarget;

/** Scenario -> passed, for one suite against one target. */
export type ScenarioResults = ReadonlyMap<string, boolean>;
export type ConformanceReport = Record<SuiteName, Record<TargetName, ScenarioResults>>;
/** The targets in tool discovery `search` mode (tools/list shows only search_tools and call_tool). */
export const searchTargets: readonly GatewayTarget[] = ['search-pinned', 'search-virtual'];

/**
 * Per suite and gateway target, the scenarios that must pass through the gateway; and scenario ->
 * why it cannot pass in search mode (every other scenario that passes straight must pass there).
 */
export type Ratchet = Record<SuiteName, Record<GatewayTarget, string[]>> & {
  readonly search_by_design: Record<string, string>;
};

export interface ConformanceEnvironment {
  readonly urls: Record<TargetName, string>;
  close(): Promise<void>;
}

/**
 * Our conformance upstream (`conf`, or `upstreamUrl` when given), a second MCP server (`second`)
 * and two gateways (open mode, on loopback): one serving `/mcp/conf`, the virtual server
 * `conf-solo` [conf] and `conf-pair` [conf, second]; one with MCP_TOOL_DISCOVERY=search serving
 * `/mcp/conf` and `conf-search` [conf, second] (`tool_discovery: search`).
 */
export async function startConformanceEnvironment(options: { upstreamUrl?: string } = {}): Promise<ConformanceEnvironment> {
  let upstream: ConformanceServer | null = null;
  let second: McpFixture | null = null;
  const gateways: GatewayProcess[] = [];
  const close = async (): Promise<void> => {
    await Promise.all(gateways.map((gateway) => gateway.stop()));
    await upstream?.close();
    await second?.close();
  };
  try {
    let upstreamUrl = options.upstreamUrl;
    if (upstreamUrl === undefined) {
      upstream = await startConformanceServer();
      upstreamUrl = upstream.url;
    }
    second = await startMcpFixture({ label: 'second', tools: ['add', 'whoami'] });
    const servers = `
mcp:
  servers:
    conf: { url: ${upstreamUrl} }
    second: { url: ${second.url} }
  virtual_servers:
    conf-solo: { servers: [conf] }
    conf-pair: { servers: [conf, second] }
    conf-search: { servers: [conf, second], tool_discovery: search }
`;
    const plain = await startGateway({ env: { HOST: '127.0.0.1' }, configYaml: servers });
    gateways.push(plain);
    const search = await startGateway({ env: { HOST: '127.0.0.1', MCP_TOOL_DISCOVERY: 'search' }, configYaml: servers });
    gateways.push(search);
    await Promise.all([waitForUpstreams(plain, ['conf', 'second']), waitForUpstreams(search, ['conf', 'second'])]);
    const base = `http://127.0.0.1:${plain.port}/mcp`;
    const searchBase = `http://127.0.0.1:${search.port}/mcp`;
    return {
      urls: {
        straight: upstreamUrl,
        pinned: `${base}/conf`,
        virtual: `${base}/conf-solo`,
        pair: `${base}/conf-pair`,
        'search-pinned': `${searchBase}/conf`,
        'search-virtual': `${base}/conf-search`,
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

async function waitForUpstreams(gateway: GatewayProcess, slugs: readonly string[]): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const reply = await fetch(`${gateway.url}/admin/mcp-servers`);
    const servers = reply.ok ? ((await reply.json()) as Array<{ slug: string; status: string }>) : [];
    if (slugs.every((slug) => servers.some((server) => server.slug === slug && server.status === 'connected'))) return;
    if (Date.now() > deadline) throw new Error(`MCP servers not connected: ${JSON.stringify(servers)}`);
    await sleep(100);
  }
}

/** Runs one suite's server scenarios against `url`; scenario -> passed (no check reported FAILURE). */
export async function runSuite(suite: SuiteName, url: string): Promise<ScenarioResults> {
  const { package: name, args } = suites[suite];
  const bin = join(dirname(createRequire(import.meta.url).resolve(`${name}/package.json`)), 'dist', 'index.js');
  const output = mkdtempSync(join(tmpdir(), 'mcp-conformance-'));
  try {
    await new Promise<void>((done, fail) => {
      const child = execFile(
        process.execPath,
        ['--import', preload, bin, 'server', '--url', url, ...args, '--output-dir', output],
        { timeout: runTimeoutMs, maxBuffer: 64 * 1024 * 1024 },
        // The CLI exits 1 when a scenario fails: only a run that wrote nothing is an error.
        (error, _stdout, stderr) =>
          error !== null && error.killed ? fail(new Error(`${suite} suite timed out on ${url}: ${stderr}`)) : done(),
      );
      child.stdin?.end();
    });
    const results = new Map<string, boolean>();
    for (const entry of readdirSync(output).sort()) {
      const scenario = entry.replace(/^server-/, '').replace(/-\d{4}-\d{2}-\d{2}T[\d-]+Z$/, '');
      const checks = JSON.parse(readFileSync(join(output, entry, 'checks.json'), 'utf8')) as Array<{ status: string }>;
      results.set(scenario, checks.length > 0 && checks.every((check) => check.status !== 'FAILURE'));
    }
    if (results.size === 0) throw new Error(`the ${suite} suite reported no scenario for ${url}`);
    return results;
  } finally {
    rmSync(output, { recursive: true, force: true });
  }
}

/** Every suite against every target (two runs at a time). */
export async function runConformance(urls: Record<TargetName, string>): Promise<ConformanceReport> {
  const targets: TargetName[] = ['straight', ...gatewayTargets];
  const jobs = (Object.keys(suites) as SuiteName[]).flatMap((suite) => targets.map((target) => ({ suite, target })));
  const report = Object.fromEntries(
    (Object.keys(suites) as SuiteName[]).map((suite) => [suite, {} as Record<TargetName, ScenarioResults>]),
  ) as ConformanceReport;
  const queue = [...jobs];
  const worker = async (): Promise<void> => {
    for (let job = queue.shift(); job !== undefined; job = queue.shift()) {
      report[job.suite][job.target] = await runSuite(job.suite, urls[job.target]);
    }
  };
  await Promise.all([worker(), worker()]);
  return report;
}

export function readRatchet(): Ratchet {
  return JSON.parse(readFileSync(ratchetPath, 'utf8')) as Ratchet;
}

/** What passes through each gateway target now (the ratchet `--update` writes; the by-design list is kept). */
export function ratchetOf(report: ConformanceReport, searchByDesign: Record<string, string>): Ratchet {
  const passing = (results: ScenarioResults): string[] =>
    [...results]
      .filter(([, passed]) => passed)
      .map(([scenario]) => scenario)
      .sort();
  const ofSuite = (suite: SuiteName): Record<GatewayTarget, string[]> =>
    Object.fromEntries(gatewayTargets.map((target) => [target, passing(report[suite][target])])) as Record<GatewayTarget, string[]>;
  return { stable: ofSuite('stable'), next: ofSuite('next'), search_by_design: searchByDesign };
}

export interface RatchetCheck {
  /** `suite/target: scenario` expected to pass through the gateway that did not. */
  readonly regressions: string[];
  /** `suite/target: scenario` that passes straight but not through the gateway (the full diff). */
  readonly missing: string[];
  /** `suite/target: scenario` that passes now but the ratchet does not list yet. */
  readonly improvements: string[];
  /** `suite/search-target: scenario` that passes straight, not in search mode, and is not listed by design. */
  readonly unexplained: string[];
}

export function checkRatchet(report: ConformanceReport, ratchet: Ratchet): RatchetCheck {
  const regressions: string[] = [];
  const missing: string[] = [];
  const improvements: string[] = [];
  const unexplained: string[] = [];
  for (const suite of Object.keys(suites) as SuiteName[]) {
    for (const target of gatewayTargets) {
      const results = report[suite][target];
      const expected = new Set(ratchet[suite][target]);
      for (const [scenario, passedStraight] of report[suite].straight) {
        const passed = results.get(scenario) === true;
        const label = `${suite}/${target}: ${scenario}`;
        if (expected.has(scenario) && !passed) regressions.push(label);
        if (passedStraight && !passed) missing.push(label);
        if (passed && !expected.has(scenario)) improvements.push(label);
        const byDesign = Object.hasOwn(ratchet.search_by_design, scenario);
        if (searchTargets.includes(target) && passedStraight && !passed && !byDesign) unexplained.push(label);
      }
    }
  }
  return { regressions, missing, improvements, unexplained };
}

export function formatReport(report: ConformanceReport): string {
  const targets: TargetName[] = ['straight', ...gatewayTargets];
  const lines: string[] = [];
  for (const suite of Object.keys(suites) as SuiteName[]) {
    const scenarios = [...report[suite].straight.keys()];
    lines.push(`${suite} (${suites[suite].package})`, `  ${'scenario'.padEnd(34)}${targets.map((target) => target.padEnd(16)).join('')}`);
    for (const scenario of scenarios) {
      const cells = targets.map((target) => (report[suite][target].get(scenario) === true ? 'pass' : 'FAIL').padEnd(16));
      lines.push(`  ${scenario.padEnd(34)}${cells.join('')}`);
    }
    const totals = targets.map((target) => {
      const passed = [...report[suite][target].values()].filter(Boolean).length;
      return `${passed}/${scenarios.length}`.padEnd(16);
    });
    lines.push(`  ${'passed'.padEnd(34)}${totals.join('')}`, '');
  }
  return lines.join('\n');
}

async function main(argv: readonly string[]): Promise<number> {
  const upstreamAt = argv.indexOf('--upstream');
  const upstreamUrl = upstreamAt >= 0 ? argv[upstreamAt + 1] : undefined;
  if (upstreamAt >= 0 && upstreamUrl === undefined) throw new Error('--upstream needs a URL');
  const environment = await startConformanceEnvironment({ upstreamUrl });
  let report: ConformanceReport;
  try {
    report = await runConformance(environment.urls);
  } finally {
    await environment.close();
  }
  process.stdout.write(formatReport(report));
  if (argv.includes('--update')) {
    if (upstreamUrl !== undefined) throw new Error('--update ratchets our own upstream only (no --upstream)');
    writeFileSync(ratchetPath, `${JSON.stringify(ratchetOf(report, readRatchet().search_by_design), null, 2)}\n`);
    process.stdout.write(`ratchet written: ${ratchetPath}\n`);
    return 0;
  }
  const check = checkRatchet(report, readRatchet());
  if (argv.includes('--diff'))
    process.stdout.write(`\npass straight, not through the gateway:\n${check.missing.map((line) => `  ${line}\n`).join('')}`);
  if (check.improvements.length > 0) {
    process.stdout.write(`\nnewly passing (run with --update to ratchet):\n${check.improvements.map((line) => `  ${line}\n`).join('')}`);
  }
  if (check.unexplained.length > 0) {
    process.stdout.write(
      `\nSEARCH MODE (passes straight, not in search mode, not listed by design):\n${check.unexplained.map((line) => `  ${line}\n`).join('')}`,
    );
  }
  // Another upstream is held to "everything that passes straight passes through the gateway" (search
  // mode: but what is listed by design), not to our ratchet.
  if (upstreamUrl !== undefined) {
    const plainMissing = check.missing.filter((line) => !searchTargets.some((target) => line.includes(`/${target}: `)));
    return plainMissing.length > 0 || check.unexplained.length > 0 ? 1 : 0;
  }
  if (check.regressions.length > 0) {
    process.stdout.write(`\nREGRESSIONS (listed in the ratchet, failing now):\n${check.regressions.map((line) => `  ${line}\n`).join('')}`);
  }
  return check.regressions.length > 0 || check.unexplained.length > 0 ? 1 : 0;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === resolve(import.meta.filename)) {
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
      process.exit(1);
    },
  );
}
