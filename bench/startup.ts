import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { PROJECT_ROOT } from './processes.ts';
import { FLOOR_ENTRY, measureStarts } from './startup-probe.ts';

// Start-up benchmark: starts `node <entry>` N times (default entry dist/main.js) with one
// provider configured that nothing listens for, and reports the median time from spawn to the
// first 200 on /health and the RSS a moment after start. With two entries (`--entry a --entry b`)
// the rounds alternate, so both are measured in the same run (A/B). `--entry floor` is a bare
// node:http server answering /health: Node's own start on this machine at this moment.
// Usage: tsx bench/startup.ts [--runs 15] [--settle-ms 1000] [--entry dist/main.js] [--entry other.js]

function parseArgs(argv: string[]): { runs: number; settleMs: number; entries: string[] } {
  let runs = 15;
  let settleMs = 1000;
  const entries: string[] = [];
  for (let index = 0; index < argv.length; index += 2) {
    if (argv[index] === '--runs') runs = Number(argv[index + 1]);
    else if (argv[index] === '--settle-ms') settleMs = Number(argv[index + 1]);
    else if (argv[index] === '--entry') entries.push(argv[index + 1] ?? '');
    else throw new Error(`unknown argument ${String(argv[index])}`);
  }
  return { runs, settleMs, entries: entries.length > 0 ? entries : ['dist/main.js'] };
}

async function main(): Promise<void> {
  const { runs, settleMs, entries } = parseArgs(process.argv.slice(2));
  const results = await measureStarts(entries, runs, settleMs);
  const base = results[0];
  for (const result of results) {
    const ratio =
      base === undefined || result === base
        ? ''
        : `, ${(result.start_to_health_ms_median / base.start_to_health_ms_median).toFixed(3)}x the first entry`;
    process.stdout.write(
      `${result.entry}: start to first /health 200 median ${result.start_to_health_ms_median} ms (min ${result.start_to_health_ms_min}, first ${result.first_start_ms})${ratio}, RSS ${settleMs} ms after ${result.rss_after_start_mb_median} MB (${result.runs} runs)\n`,
    );
  }
  mkdirSync(join(PROJECT_ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(
    join(PROJECT_ROOT, 'bench', 'results', 'startup.json'),
    `${JSON.stringify({ date: new Date().toISOString(), node: process.version, floor_entry: FLOOR_ENTRY, results }, null, 2)}\n`,
  );
}

await main();
