import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { killOnExit, startGateway, stopChild, type GatewayProcess } from '../test/support/gateway-process.ts';

// Runs the `openai` SDK's own generated api-resource tests (openai-node v6.49.0, the version
// package.json pins; vendored in test/openai-sdk/api-resources) against a Prism mock of OpenAI's
// published OpenAPI spec (test/openai-sdk/openapi.yaml), twice: straight to the mock, and through
// the gateway's /v1 (the built gateway, `node dist/main.js`, its default `openai` instance in
// front of the same mock, called with a managed API key). Nothing is downloaded: Prism is the
// pinned devDependency @stoplight/prism-cli, the spec is a file the project keeps.
//
//   npm run sdk:conformance              per-resource counts, the tests that pass straight but
//                                        not through the gateway, and the ratchet check
//   npm run sdk:conformance -- --update  rewrite the ratchet with what fails through the gateway now
//
// Not held to "passes through the gateway": the organization admin API (tests under admin/, run
// through the gateway only: each request must answer 404 `unknown_route`), and the tests that act on
// an id the caller never created (expected.json `not_created`, each with its reason): through the
// gateway those pass, or answer 404 with a `<resource>_not_found` code as an unknown id does.
// The ratchet (expected.json `failing_through_gateway`, per resource) lists what still fails; a
// test failing that is not listed, or a listed test that now passes, fails the check
// (test/e2e/openai-sdk-resources.test.ts).

const projectRoot = resolve(import.meta.dirname, '..');
const sdkDir = join(projectRoot, 'test', 'openai-sdk');
const testsDir = join(sdkDir, 'api-resources');
export const ratchetPath = join(sdkDir, 'expected.json');
const specPath = join(sdkDir, 'openapi.yaml');
const prismStartTimeoutMs = 240_000;
const runTimeoutMs = 600_000;

export type Outcome = 'passed' | 'failed' | 'skipped';

/** One request a test made (the setup file jest-adapter.ts logs them). */
export interface RequestLine {
  readonly method: string;
  readonly path: string;
  readonly status: number;
  readonly code: string | null;
}

export interface TestRun {
  readonly outcome: Outcome;
  readonly requests: readonly RequestLine[];
}

/** Test id (`<resource> > <describe> > <test>`, the resource being its file under api-resources) -> run. */
export type SuiteRun = ReadonlyMap<string, TestRun>;

export interface SdkReport {
  readonly straight: SuiteRun;
  readonly gateway: SuiteRun;
}

export interface Ratchet {
  readonly sdk: string;
  readonly spec: string;
  /** Test id -> why it acts on an id the caller never created. */
  readonly not_created: Record<string, string>;
  /** Resource -> the tests (`<describe> > <test>`) that pass straight and fail through the gateway now. */
  readonly failing_through_gateway: Record<string, string[]>;
}

export const resourceOf = (id: string): string => id.slice(0, id.indexOf(' > '));
export const isAdmin = (id: string): boolean => id.startsWith('admin/');

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const address = server.address();
  await new Promise<void>((done) => server.close(() => done()));
  if (address === null || typeof address === 'string') throw new Error('no free port');
  return address.port;
}

export interface SdkEnvironment {
  readonly prismUrl: string;
  readonly gateway: GatewayProcess;
  readonly apiKey: string;
  close(): Promise<void>;
}

/** Prism on a free loopback port, serving the spec; resolves once it answers HTTP. */
async function startPrism(): Promise<{ url: string; child: ChildProcess }> {
  const packageJson = createRequire(import.meta.url).resolve('@stoplight/prism-cli/package.json');
  const { bin } = JSON.parse(readFileSync(packageJson, 'utf8')) as { bin: { prism: string } };
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [join(dirname(packageJson), bin.prism), 'mock', '-h', '127.0.0.1', '-p', String(port), '-v', 'error', specPath],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  killOnExit(child);
  const output: string[] = [];
  const keep = (chunk: Buffer): void => {
    output.push(chunk.toString('utf8'));
    if (output.length > 50) output.shift();
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + prismStartTimeoutMs;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`prism exited with ${child.exitCode}:\n${output.join('')}`);
    const answered = await fetch(`${url}/models`, { headers: { authorization: 'Bearer probe' } }).then(
      () => true,
      () => false,
    );
    if (answered) return { url, child };
    if (Date.now() > deadline) {
      await stopChild(child, 'SIGKILL');
      throw new Error(`prism did not answer within ${prismStartTimeoutMs} ms:\n${output.join('')}`);
    }
    await sleep(250);
  }
}

/**
 * Every `model: '...'` the tests send (the admin API's aside): the instance serves these (without
 * `models`, it would serve only what the mock's `GET /models` example lists).
 */
export function sdkModels(): string[] {
  const files = readdirSync(testsDir, { recursive: true, encoding: 'utf8' }).filter((file) => file.endsWith('.test.ts') && !isAdmin(file));
  const models = files.flatMap((file) =>
    [...readFileSync(join(testsDir, file), 'utf8').matchAll(/\bmodel: '([^']+)'/g)].map((match) => match[1] ?? ''),
  );
  return [...new Set(models)].sort();
}

/** Prism, and a gateway whose default `openai` instance is in front of it, with one managed user key. */
export async function startSdkEnvironment(): Promise<SdkEnvironment> {
  const prism = await startPrism();
  let gateway: GatewayProcess | null = null;
  try {
    const masterKey = 'sdk-conformance-master-key';
    const configYaml = `
providers:
  openai:
    type: openai
    api_key: sk-prism
    base_url: ${prism.url}
    models: ${JSON.stringify(sdkModels())}
`;
    gateway = await startGateway({ env: { MASTER_KEY: masterKey, HOST: '127.0.0.1' }, configYaml });
    const reply = await fetch(`${gateway.url}/admin/api-keys`, {
      method: 'POST',
      headers: { authorization: `Bearer ${masterKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'openai-sdk', user_path: '/sdk/tenant' }),
    });
    if (reply.status !== 201) throw new Error(`creating the API key answered ${reply.status}: ${await reply.text()}`);
    const { key } = (await reply.json()) as { key: string };
    const started = gateway;
    return {
      prismUrl: prism.url,
      gateway: started,
      apiKey: key,
      async close() {
        await started.stop();
        await stopChild(prism.child, 'SIGTERM', 5_000);
      },
    };
  } catch (error) {
    await gateway?.kill();
    await stopChild(prism.child, 'SIGKILL');
    throw error;
  }
}

interface VitestJson {
  testResults: Array<{ name: string; assertionResults: Array<{ ancestorTitles: string[]; title: string; status: string }> }>;
}

const fileId = (path: string): string => relative(testsDir, path).replace(/\.test\.ts$/, '');

/**
 * Runs the vendored tests against `baseUrl` (with `apiKey` instead of theirs when given; without
 * the organization admin API's tests when `withAdmin` is false).
 */
export async function runSdkTests(baseUrl: string, options: { apiKey?: string; withAdmin: boolean }): Promise<SuiteRun> {
  const work = mkdtempSync(join(tmpdir(), 'openai-sdk-'));
  const report = join(work, 'report.json');
  const log = join(work, 'requests.jsonl');
  writeFileSync(log, '');
  try {
    const vitest = join(dirname(createRequire(import.meta.url).resolve('vitest/package.json')), 'vitest.mjs');
    const args = [vitest, 'run', '--config', join(sdkDir, 'vitest.config.ts'), '--reporter=json', `--outputFile=${report}`];
    if (!options.withAdmin) args.push('--exclude', 'api-resources/admin/**');
    const { apiKey } = options;
    const env = {
      ...process.env,
      TEST_API_BASE_URL: baseUrl,
      OPENAI_SDK_TEST_LOG: log,
      ...(apiKey === undefined ? {} : { OPENAI_SDK_TEST_API_KEY: apiKey }),
    };
    const child = spawn(process.execPath, args, { cwd: projectRoot, env, stdio: ['ignore', 'ignore', 'pipe'] });
    killOnExit(child);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-20_000)));
    const timer = setTimeout(() => child.kill('SIGKILL'), runTimeoutMs);
    // vitest exits 1 when a test fails: only a run that wrote no report is an error.
    await new Promise<void>((done) => child.once('exit', () => done()));
    clearTimeout(timer);
    const parsed = JSON.parse(readFileSync(report, 'utf8').toString() || 'null') as VitestJson | null;
    if (parsed === null) throw new Error(`the SDK tests wrote no report for ${baseUrl}:\n${stderr}`);
    const requests = new Map<string, RequestLine[]>();
    for (const line of readFileSync(log, 'utf8').split('\n').filter(Boolean)) {
      const { file, test, ...request } = JSON.parse(line) as RequestLine & { file: string; test: string };
      const id = `${fileId(file)} > ${test}`;
      requests.set(id, [...(requests.get(id) ?? []), request]);
    }
    const results = new Map<string, TestRun>();
    for (const file of parsed.testResults) {
      for (const test of file.assertionResults) {
        const id = [fileId(file.name), ...test.ancestorTitles, test.title].join(' > ');
        const outcome: Outcome = test.status === 'passed' ? 'passed' : test.status === 'failed' ? 'failed' : 'skipped';
        results.set(id, { outcome, requests: requests.get(id) ?? [] });
      }
    }
    if (results.size === 0) throw new Error(`the SDK tests reported no test for ${baseUrl}:\n${stderr}`);
    return results;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Both runs, at the same time (the gateway run mostly waits on the same Prism). The organization
 * admin API's tests run through the gateway only: they are excluded, and must not be relayed.
 */
export async function runSdkConformance(environment: SdkEnvironment): Promise<SdkReport> {
  const [straight, gateway] = await Promise.all([
    runSdkTests(environment.prismUrl, { withAdmin: false }),
    runSdkTests(`${environment.gateway.url}/v1`, { apiKey: environment.apiKey, withAdmin: true }),
  ]);
  return { straight, gateway };
}

/** The gateway never relays the organization admin API: every request answers 404 `unknown_route`. */
export function notRelayed(run: TestRun): boolean {
  return run.requests.every((request) => request.status === 404 && request.code === 'unknown_route');
}

/** Through the gateway, a test on an id never created answers like an unknown id: 404 `<resource>_not_found`. */
export function answeredAsUnknownId(run: TestRun | undefined): boolean {
  const requests = run?.requests ?? [];
  return requests.length > 0 && requests.every((request) => request.status === 404 && /^[a-z_]+_not_found$/.test(request.code ?? ''));
}

export interface SdkCheck {
  /** Passes straight (not admin): how many, and how many of them hold through the gateway. */
  readonly held: number;
  readonly comparable: number;
  /** Test ids that pass straight and do not hold through the gateway. */
  readonly failing: string[];
  /** Failing and not in the ratchet. */
  readonly regressions: string[];
  /** In the ratchet, passing straight and holding through the gateway now: run with --update. */
  readonly stale: string[];
  /** Organization admin API tests that the gateway did not answer with 404 `unknown_route` (it must never relay them). */
  readonly adminRelayed: string[];
  /** `not_created` entries naming no test. */
  readonly unknownExclusions: string[];
}

export function checkSdk(report: SdkReport, ratchet: Ratchet): SdkCheck {
  const listed = new Set(
    Object.entries(ratchet.failing_through_gateway).flatMap(([resource, tests]) => tests.map((test) => `${resource} > ${test}`)),
  );
  const failing: string[] = [];
  const adminRelayed: string[] = [];
  let comparable = 0;
  for (const [id, through] of report.gateway) if (isAdmin(id) && !notRelayed(through)) adminRelayed.push(id);
  for (const [id, straight] of report.straight) {
    const through = report.gateway.get(id);
    if (straight.outcome !== 'passed') continue;
    comparable += 1;
    const holds = through?.outcome === 'passed' || (Object.hasOwn(ratchet.not_created, id) && answeredAsUnknownId(through));
    if (!holds) failing.push(id);
  }
  const failingSet = new Set(failing);
  return {
    held: comparable - failing.length,
    comparable,
    failing,
    regressions: failing.filter((id) => !listed.has(id)),
    // A listed test that does not pass straight this time (a mock hiccup) proves nothing either way.
    stale: [...listed].filter((id) => !failingSet.has(id) && report.straight.get(id)?.outcome === 'passed'),
    adminRelayed,
    unknownExclusions: Object.keys(ratchet.not_created).filter((id) => !report.straight.has(id)),
  };
}

export function readRatchet(): Ratchet {
  return JSON.parse(readFileSync(ratchetPath, 'utf8')) as Ratchet;
}

/** Groups test ids by resource: resource -> tests (without the resource prefix). */
export function byResource(ids: readonly string[]): Record<string, string[]> {
  const groups: Record<string, string[]> = {};
  for (const id of [...ids].sort()) (groups[resourceOf(id)] ??= []).push(id.slice(resourceOf(id).length + 3));
  return groups;
}

const count = (run: SuiteRun, keep: (id: string) => boolean, outcome: Outcome): number =>
  [...run].filter(([id, test]) => keep(id) && test.outcome === outcome).length;

/** The first request the gateway refused, as `  [POST /v1/x: 404 unknown_route]`. */
function firstError(run: TestRun | undefined): string {
  const refused = run?.requests.find((request) => request.status >= 400);
  return refused === undefined ? '' : `  [${refused.method} ${refused.path}: ${refused.status} ${refused.code ?? ''}]`;
}

/** Per resource: passing straight, holding through the gateway; then the totals and the failing tests. */
export function formatReport(report: SdkReport, check: SdkCheck): string {
  const failingBy = byResource(check.failing);
  const resources = [...new Set([...report.straight.keys()].map(resourceOf))].sort();
  const lines = [`  ${'resource'.padEnd(40)}${'tests'.padEnd(7)}${'straight'.padEnd(10)}gateway`];
  for (const resource of resources) {
    const mine = (id: string): boolean => resourceOf(id) === resource;
    const total = [...report.straight.keys()].filter(mine).length;
    const straight = count(report.straight, mine, 'passed');
    const held = straight - (failingBy[resource]?.length ?? 0);
    lines.push(`  ${resource.padEnd(40)}${String(total).padEnd(7)}${String(straight).padEnd(10)}${held}`);
  }
  const all = (): boolean => true;
  const admin = [...report.gateway.keys()].filter(isAdmin);
  lines.push(
    '',
    `straight to the mock: ${count(report.straight, all, 'passed')} of ${report.straight.size} pass (${count(report.straight, all, 'skipped')} skipped)`,
    `through the gateway's /v1: ${check.held} of the ${check.comparable} that pass straight hold ` +
      `(${count(report.gateway, (id) => !isAdmin(id), 'passed')} pass, the rest answer a never-created id as unknown)`,
    `organization admin API (excluded, through the gateway only): ${admin.length - check.adminRelayed.length} of ${admin.length} answer 404 unknown_route`,
    '',
    'pass straight, not through the gateway:',
  );
  for (const [resource, tests] of Object.entries(failingBy)) {
    lines.push(`  ${resource} (${tests.length})`);
    for (const test of tests) lines.push(`    ${test}${firstError(report.gateway.get(`${resource} > ${test}`))}`);
  }
  return `${lines.join('\n')}\n`;
}

async function main(argv: readonly string[]): Promise<number> {
  const environment = await startSdkEnvironment();
  let report: SdkReport;
  try {
    report = await runSdkConformance(environment);
  } finally {
    await environment.close();
  }
  const ratchet = readRatchet();
  const check = checkSdk(report, ratchet);
  process.stdout.write(formatReport(report, check));
  if (argv.includes('--update')) {
    // Written as Prettier formats it, so that `npm run lint` passes on the new file.
    const { format, resolveConfig } = await import('prettier');
    const json = JSON.stringify({ ...ratchet, failing_through_gateway: byResource(check.failing) });
    writeFileSync(ratchetPath, await format(json, { ...(await resolveConfig(ratchetPath)), filepath: ratchetPath }));
    process.stdout.write(`ratchet written: ${ratchetPath}\n`);
    return 0;
  }
  const sections: Array<[string, string[]]> = [
    ['REGRESSIONS (pass straight, fail through the gateway, not in the ratchet)', check.regressions],
    ['in the ratchet but holding now (run with --update)', check.stale],
    ['ORGANIZATION ADMIN API relayed by the gateway', check.adminRelayed],
    ['not_created entries naming no test', check.unknownExclusions],
  ];
  for (const [title, ids] of sections) if (ids.length > 0) process.stdout.write(`\n${title}:\n${ids.map((id) => `  ${id}\n`).join('')}`);
  return sections.some(([, ids]) => ids.length > 0) ? 1 : 0;
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
