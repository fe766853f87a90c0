import { cpSync, existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pino } from 'pino';

import { buildGuardrails } from '../src/guardrails/guardrail-settings.ts';
import { Guardrails } from '../src/guardrails/pipeline.ts';
import type { ChatRequestBody } from '../src/providers/provider.ts';
import { measureLoad, round, startGateway, startMock } from './harness.ts';
import { PROJECT_ROOT as ROOT, clockTicksPerSecond, mainThreadTicks, median, pin, runBench } from './processes.ts';

// `npm run bench:guardrails` (after `npm run build`): what the PII guardrail costs (issue 20:
// at most 30 µs of CPU per request on a 2 KB prompt) and what no guardrail costs (nothing
// measurable: within 1%).
// 1. Microbench, in process: select + input + output of the `pii` guardrail (every entity) on
//    a realistic 2 KB chat body and its answer; CPU time (process.cpuUsage) per request,
//    median over samples of many requests. Also `select` with no guardrail configured.
// 2. Paired A/B of gateways (bench/paired.ts method: both pinned to CPU 0, loaded together
//    from CPU 1, main-thread CPU per request per round, median of per-round figures):
//    none vs pii, and a build with the guardrail hook call removed vs none.
// BENCH_ROUNDS (6), BENCH_DURATION (3), BENCH_SAMPLES (101).

const system = 'You are a careful assistant for the customer support team. Answer briefly and never invent account data.';
const filler =
  'The customer reports that the invoice for the last quarter shows a charge they do not recognise, and asks for a ' +
  'breakdown of the items, the dates of delivery and the contact of the account manager in charge of their region. ';
/** About 2 KB of user text holding a few PII items among ordinary prose. */
const prompt2k =
  `${filler}Reach me at jane.doe@example.com or +44 20 7946 0958. ${filler}` +
  `My card is 4111 1111 1111 1111 and our IBAN GB82 WEST 1234 5698 7654 32; the office IP is 192.168.10.24. ${filler}` +
  `${filler}${filler}${filler}${filler}${filler}Thanks, Jane.`;
const messages = [
  { role: 'system', content: system },
  { role: 'user', content: prompt2k },
];
const body: ChatRequestBody = { model: 'mock-model', messages };
const answer = JSON.stringify({
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'mock-model',
  choices: [
    { index: 0, message: { role: 'assistant', content: `${filler}I wrote to billing@example.com for you.` }, finish_reason: 'stop' },
  ],
  usage: { prompt_tokens: 500, completion_tokens: 60, total_tokens: 560 },
});
const answerParsed = JSON.parse(answer) as Record<string, unknown>;
const piiYaml = 'guardrails:\n  - { name: pii, type: pii }\n';

/** CPU µs per call of `run`, median over `samples` batches of `batch` calls. */
async function cpuPerCall(run: () => Promise<unknown>, samples: number, batch: number): Promise<number> {
  for (let index = 0; index < 2000; index += 1) await run();
  const perCall: number[] = [];
  for (let sample = 0; sample < samples; sample += 1) {
    const start = process.cpuUsage();
    for (let index = 0; index < batch; index += 1) await run();
    const used = process.cpuUsage(start);
    perCall.push((used.user + used.system) / batch);
  }
  return median(perCall);
}

async function microbench(samples: number): Promise<Record<string, number>> {
  const silent = pino({ level: 'silent' });
  const pii = await Guardrails.create(buildGuardrails([{ name: 'pii', type: 'pii' }]), silent);
  if (pii === null) throw new Error('no pii guardrail');
  const context = { requestId: 'bench' };
  const guarded = async (): Promise<unknown> => {
    const guard = pii.select('/', 'mock-model', '/v1/chat/completions', context);
    if (guard === null) throw new Error('pii guardrail not selected');
    await guard.input(body);
    return guard.output(answer, answerParsed); // as chat-completions.ts passes the answer readJsonAnswer parsed
  };
  const none = Guardrails.open(silent);
  const unguarded = async (): Promise<unknown> => none.select('/', 'mock-model', '/v1/chat/completions', context);
  return {
    pii_input_and_output_cpu_us_per_request: round(await cpuPerCall(guarded, samples, 200), 2),
    none_select_cpu_us_per_request: round(await cpuPerCall(unguarded, samples, 20_000), 4),
    prompt_bytes: Buffer.byteLength(JSON.stringify(body)),
    answer_bytes: Buffer.byteLength(answer),
  };
}

/** A copy of dist/ whose model endpoints never call the guardrails (the hook call replaced by null). */
function buildWithoutHook(): string {
  const target = join(ROOT, 'dist-noguard');
  rmSync(target, { recursive: true, force: true });
  cpSync(join(ROOT, 'dist'), target, { recursive: true });
  let replaced = 0;
  const visit = (directory: string): void => {
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) visit(path);
      else if (entry.name.endsWith('.js')) {
        const text = readFileSync(path, 'utf8');
        const patched = text.replace(/dependencies\.guardrails\?\.select\([^;]*?\) \?\? null/g, () => {
          replaced += 1;
          return 'null';
        });
        if (patched !== text) writeFileSync(path, patched);
      }
    }
  };
  visit(target);
  if (replaced < 3) throw new Error(`expected the hook call in chat, messages and responses; replaced ${replaced}`);
  return 'dist-noguard/main.js';
}

interface Side {
  name: string;
  pid: number;
  baseUrl: string;
  cpuUsPerRequest: number[];
}

async function startSide(name: string, entry: string, yaml: string | null, mockUrl: string): Promise<Side> {
  const workDirectory = await mkdtemp(join(tmpdir(), 'gateway-guardrails-'));
  if (yaml !== null) await writeFile(join(workDirectory, 'config.yaml'), yaml);
  const gateway = await startGateway(resolve(ROOT, entry), { REQUEST_LOG_ENABLED: 'false' }, mockUrl, workDirectory);
  const pid = gateway.child.pid;
  if (pid === undefined) throw new Error(`gateway ${name} has no pid`);
  pin(pid, 0);
  return { name, pid, baseUrl: gateway.baseUrl, cpuUsPerRequest: [] };
}

/** Both sides loaded together each round; main-thread CPU µs per request per round. */
async function paired(sides: [Side, Side], mock: { url: string; child: { pid?: number } }, rounds: number, durationSeconds: number) {
  const ticksPerSecond = clockTicksPerSecond();
  const spec = { target: 'gateway' as const, stream: false, concurrency: 50, durationSeconds, warmupSeconds: 1 };
  for (let index = 0; index <= rounds; index += 1) {
    const before = sides.map((side) => mainThreadTicks(side.pid));
    const processes = (side: Side) => ({
      mockUrl: mock.url,
      mockPid: mock.child.pid,
      gatewayUrl: side.baseUrl,
      gatewayPid: side.pid,
      ticksPerSecond,
    });
    const loads = await Promise.all(sides.map((side) => measureLoad(spec, processes(side), messages)));
    if (index === 0) continue; // warm-up round
    process.stderr.write(`bench: ${sides[0].name} vs ${sides[1].name}, round ${index}/${rounds}\n`);
    sides.forEach((side, at) => {
      const load = loads[at];
      if (load === undefined || load.errors > 0) throw new Error(`gateway ${side.name} answered with errors: ${load?.first_error ?? ''}`);
      const ticks = mainThreadTicks(side.pid) - (before[at] ?? 0);
      side.cpuUsPerRequest.push(round((ticks * 1e6) / ticksPerSecond / Math.max(1, load.total_requests), 1));
    });
  }
  const [first, second] = sides;
  const ratios = second.cpuUsPerRequest.map((value, index) => value / (first.cpuUsPerRequest[index] ?? value));
  const deltas = second.cpuUsPerRequest.map((value, index) => value - (first.cpuUsPerRequest[index] ?? value));
  return {
    [first.name]: { median_cpu_us_per_request: median(first.cpuUsPerRequest), rounds: first.cpuUsPerRequest },
    [second.name]: { median_cpu_us_per_request: median(second.cpuUsPerRequest), rounds: second.cpuUsPerRequest },
    ratio: round(median(ratios), 3),
    delta_cpu_us_per_request: round(median(deltas), 1),
  };
}

/** The paired runs BENCH_ONLY names (`pii`, `hook`; both when absent), on one mock. */
async function pairedRuns(only: string | undefined, rounds: number, durationSeconds: number): Promise<Record<string, unknown>> {
  if (cpus().length < 2) throw new Error('paired runs need two CPUs');
  pin(process.pid, 1);
  const mock = await startMock();
  const results: Record<string, unknown> = {};
  const none = await startSide('none', 'dist/main.js', null, mock.url);
  if (only === undefined || only === 'pii') {
    const pii = await startSide('pii', 'dist/main.js', piiYaml, mock.url);
    results['paired_none_vs_pii'] = await paired([{ ...none, cpuUsPerRequest: [] }, pii], mock, rounds, durationSeconds);
  }
  if (only === undefined || only === 'hook') {
    const hookRemoved = await startSide('hook_removed', buildWithoutHook(), null, mock.url);
    results['paired_hook_removed_vs_none'] = await paired([hookRemoved, { ...none, cpuUsPerRequest: [] }], mock, rounds, durationSeconds);
  }
  return results;
}

/** BENCH_ONLY=micro|pii|hook runs one part (each under three minutes); results merge into guardrails.json. */
async function main(): Promise<void> {
  const only = process.env.BENCH_ONLY;
  const rounds = Number(process.env.BENCH_ROUNDS ?? 6);
  const durationSeconds = Number(process.env.BENCH_DURATION ?? 3);
  const file = join(ROOT, 'bench', 'results', 'guardrails.json');
  const document: Record<string, unknown> = existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>) : {};
  if (only === undefined || only === 'micro') document['microbench'] = await microbench(Number(process.env.BENCH_SAMPLES ?? 101));
  if (only !== 'micro') {
    const runs = await pairedRuns(only, rounds, durationSeconds);
    for (const [name, result] of Object.entries(runs)) document[name] = { rounds, durationSeconds, ...(result as object) };
  }
  document['date'] = new Date().toISOString();
  document['node'] = process.version;
  document['method'] =
    'microbench: process.cpuUsage over batches of requests, median of samples; paired: main-thread CPU per request of two gateways loaded together (2 KB prompt), median of per-round figures';
  process.stdout.write(`${JSON.stringify(document, null, 2)}\n`);
  await mkdir(join(ROOT, 'bench', 'results'), { recursive: true });
  await writeFile(file, `${JSON.stringify(document, null, 2)}\n`);
  rmSync(join(ROOT, 'dist-noguard'), { recursive: true, force: true });
}

await runBench(main);
