import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { type GatewayProcess, MASTER_KEY, startGateway } from '../support/gateway-process.ts';
import { waitForConnected } from '../support/mcp.ts';
import { type McpFixture, startMcpFixture } from '../support/mcp-fixture-server.ts';

// The official MCP Inspector in CLI mode (`@modelcontextprotocol/inspector-cli`, bin `mcp-inspector-cli
// --cli`) through the built gateway (issue 28: "the MCP Inspector CLI keeps passing"). The standalone
// CLI package is used because `@modelcontextprotocol/inspector` declares engines node >=22.7.5 (0.16
// to 1.0.3; 2.x >=22.19) and CI also runs Node 20. Each call is one child process: connect over
// Streamable HTTP with the bearer header, one method, the result printed as JSON on stdout, exit
// code 1 with the error on stderr otherwise.

const packageJsonPath = createRequire(import.meta.url).resolve('@modelcontextprotocol/inspector-cli/package.json');
const packageJson = JSON.parse(readFileSync(packageJsonPath, 'utf8')) as { bin: Record<string, string> };
const inspectorBin = resolve(dirname(packageJsonPath), packageJson.bin['mcp-inspector-cli'] ?? 'build/cli.js');

const inspectorTimeoutMs = 30_000;

interface InspectorRun {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `mcp-inspector-cli --cli <url> --method ...` with Node; never rejects, reports the exit code.
 * The bin re-spawns its `build/index.js`, so the run gets its own process group and a timeout kills
 * the whole group (a plain `timeout` would kill only the wrapper and leave the client running).
 */
function runInspector(url: string, args: readonly string[], token: string | null = MASTER_KEY): Promise<InspectorRun> {
  const header = token === null ? [] : ['--header', `Authorization: Bearer ${token}`];
  const child = spawn(process.execPath, [inspectorBin, '--cli', url, '--transport', 'http', ...header, ...args], {
    // The CLI reads its own package.json relative to the working directory: run it from its build/.
    cwd: dirname(inspectorBin),
    detached: true,
    env: { PATH: process.env['PATH'] ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
  }, inspectorTimeoutMs);
  return new Promise((done) => {
    child.on('error', (error) => {
      clearTimeout(timer);
      done({ code: -1, stdout, stderr: `${String(error)}\n${stderr}` });
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      done({ code: timedOut ? -1 : (code ?? -1), stdout, stderr: timedOut ? `timed out\n${stderr}` : stderr });
    });
  });
}

/** The JSON result of a successful run; fails the test with the CLI's stderr otherwise. */
async function inspect(url: string, args: readonly string[]): Promise<Record<string, unknown>> {
  const run = await runInspector(url, args);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as Record<string, unknown>;
}

const names = (result: Record<string, unknown>, key: string, field = 'name'): unknown[] =>
  (result[key] as Array<Record<string, unknown>>).map((entry) => entry[field]);

describe('MCP Inspector CLI through the gateway', () => {
  let alpha: McpFixture;
  let beta: McpFixture;
  let gateway: GatewayProcess;

  beforeAll(async () => {
    alpha = await startMcpFixture({ label: 'alpha', tools: ['echo', 'add', 'fail'] });
    beta = await startMcpFixture({ label: 'beta', tools: ['echo', 'create_issue'] });
    const configYaml = `
mcp:
  servers:
    alpha:
      url: ${alpha.url}
    beta:
      url: ${beta.url}
  virtual_servers:
    coding:
      servers: [alpha, beta]
`;
    gateway = await startGateway({ configYaml, env: { MASTER_KEY }, startTimeoutMs: 60_000 });
    await waitForConnected(gateway, ['alpha', 'beta'], 30_000);
  }, 90_000);

  afterAll(async () => {
    await gateway?.stop();
    await alpha?.close();
    await beta?.close();
  });

  it('a pinned server: tools/list, tools/call with arguments, resources/list and prompts/list', async () => {
    const url = `${gateway.url}/mcp/alpha`;
    const tools = await inspect(url, ['--method', 'tools/list']);
    expect(names(tools, 'tools')).toEqual(['add', 'echo', 'fail']);
    const called = await inspect(url, ['--method', 'tools/call', '--tool-name', 'add', '--tool-arg', 'a=2', 'b=40']);
    expect(called).toMatchObject({ content: [{ type: 'text', text: 'alpha: 42' }] });
    expect(called['isError']).not.toBe(true);
    const echoed = await inspect(url, ['--method', 'tools/call', '--tool-name', 'echo', '--tool-arg', 'text=hello inspector']);
    expect(echoed).toMatchObject({ content: [{ type: 'text', text: 'alpha: hello inspector' }] });
    const failed = await inspect(url, ['--method', 'tools/call', '--tool-name', 'fail']);
    expect(failed).toMatchObject({ isError: true, content: [{ type: 'text', text: 'alpha: failed on purpose' }] });
    const resources = await inspect(url, ['--method', 'resources/list']);
    expect(names(resources, 'resources', 'uri')).toEqual(['fixture://alpha/readme']);
    const prompts = await inspect(url, ['--method', 'prompts/list']);
    expect(names(prompts, 'prompts')).toEqual(['greeting']);
  });

  it('a virtual server: tools/list, tools/call with arguments, resources/list and prompts/list', async () => {
    const url = `${gateway.url}/mcp/coding`;
    const tools = await inspect(url, ['--method', 'tools/list']);
    expect(names(tools, 'tools')).toEqual(['add', 'alpha_echo', 'fail', 'create_issue', 'beta_echo']);
    const created = await inspect(url, ['--method', 'tools/call', '--tool-name', 'create_issue', '--tool-arg', 'title=Bug']);
    expect(created).toMatchObject({ content: [{ type: 'text', text: 'beta: created issue "Bug"' }] });
    const echoed = await inspect(url, ['--method', 'tools/call', '--tool-name', 'alpha_echo', '--tool-arg', 'text=hi']);
    expect(echoed).toMatchObject({ content: [{ type: 'text', text: 'alpha: hi' }] });
    const resources = await inspect(url, ['--method', 'resources/list']);
    expect(names(resources, 'resources', 'uri')).toEqual(['fixture://alpha/readme', 'fixture://beta/readme']);
    const prompts = await inspect(url, ['--method', 'prompts/list']);
    expect(names(prompts, 'prompts')).toEqual(['alpha_greeting', 'beta_greeting']);
  });

  it('the CLI fails, with nothing on stdout, for an unknown server, a missing key and an unknown tool', async () => {
    const unknown = await runInspector(`${gateway.url}/mcp/ghost`, ['--method', 'tools/list']);
    expect(unknown.code).toBe(1);
    expect(unknown.stdout).toBe('');
    expect(unknown.stderr).toContain('mcp_endpoint_not_found');
    const anonymous = await runInspector(`${gateway.url}/mcp/alpha`, ['--method', 'tools/list'], null);
    expect(anonymous.code).toBe(1);
    expect(anonymous.stdout).toBe('');
    expect(anonymous.stderr).toContain('missing_credentials');
    const noTool = await runInspector(`${gateway.url}/mcp/alpha`, ['--method', 'tools/call', '--tool-name', 'nope']);
    expect(noTool.code).toBe(1);
    expect(noTool.stderr).toContain('unknown tool "nope"');
  });
});
