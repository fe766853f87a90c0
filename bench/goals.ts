import type { MeasuredLoad } from './harness.ts';
import type { StartSummary } from './startup-probe.ts';

// The rows of issue 18's table (and issue 21's cold start), each with its goal, computed from
// one `npm run bench` run: rates as ratios to direct (load -> mock) in the same run.

export interface LoadRow extends MeasuredLoad {
  name: string;
  target: 'direct' | 'gateway';
  stream: boolean;
  concurrency: number;
  rps_vs_direct?: number;
  p50_overhead_ms?: number;
}

export interface GoalRow {
  measure: string;
  direct: string;
  gateway: number;
  unit: string;
  goal: string;
  pass: boolean;
}

export interface Memory {
  rss_after_start_mb: number;
  rss_mb: number;
  hwm_mb: number;
}

function find(rows: LoadRow[], target: 'direct' | 'gateway', stream: boolean, concurrency: number): LoadRow | undefined {
  return rows.find((row) => row.target === target && row.stream === stream && row.concurrency === concurrency);
}

function atLeast(measure: string, value: number | undefined, goal: number, direct = ''): GoalRow {
  const gateway = value ?? 0;
  return { measure, direct, gateway, unit: direct === '' ? '' : 'x direct', goal: `>= ${goal}`, pass: gateway >= goal };
}

function atMost(measure: string, value: number | undefined, goal: number, unit: string): GoalRow {
  const gateway = value ?? Number.POSITIVE_INFINITY;
  return { measure, direct: '-', gateway, unit, goal: `<= ${goal} ${unit}`, pass: gateway <= goal };
}

export function goalRows(rows: LoadRow[], memory: Memory, start: StartSummary | undefined): GoalRow[] {
  const c50 = find(rows, 'gateway', false, 50);
  const streams = find(rows, 'gateway', true, 10);
  const c1 = find(rows, 'gateway', false, 1);
  const startMs = start?.start_to_health_ms_median;
  const cold: GoalRow = {
    measure: 'cold start to first 200 on /health, no providers reachable (issue 21)',
    direct: '-',
    gateway: startMs ?? Number.POSITIVE_INFINITY,
    unit: 'ms',
    goal: '< 500 ms',
    pass: startMs !== undefined && startMs < 500,
  };
  return [
    atLeast('c=50 non-stream, rate vs direct', c50?.rps_vs_direct, 0.35, '1.000'),
    atMost('gateway CPU per request, c=50', c50?.gateway_cpu_us_per_request, 110, 'us'),
    atLeast('c=10 streams (20 chunks), rate vs direct', streams?.rps_vs_direct, 0.8, '1.000'),
    atMost('gateway CPU per stream, c=10', streams?.gateway_cpu_us_per_request, 220, 'us'),
    atMost('c=1 non-stream, added p50', c1?.p50_overhead_ms, 0.15, 'ms'),
    atMost('RSS 1 s after start', memory.rss_after_start_mb, 70, 'MB'),
    atMost('RSS peak under the bench (VmHWM)', memory.hwm_mb, 110, 'MB'),
    atMost('start to first 200 on /health (node dist/main.js, median)', startMs, 300, 'ms'),
    cold,
  ];
}

export function printGoalRows(goals: GoalRow[], start: StartSummary | undefined, floor: StartSummary | undefined): string[] {
  const header = ['measure (issue 18 table, same run)', 'direct', 'gateway', 'goal', 'result'];
  const cells = goals.map((row) => [row.measure, row.direct, `${row.gateway} ${row.unit}`.trim(), row.goal, row.pass ? 'PASS' : 'FAIL']);
  const widths = header.map((title, column) => Math.max(title.length, ...cells.map((row) => (row[column] ?? '').length)));
  const format = (row: string[]): string => row.map((cell, column) => cell.padEnd(widths[column] ?? 0)).join('  ');
  const lines = [format(header), widths.map((width) => '-'.repeat(width)).join('  '), ...cells.map(format)];
  if (start !== undefined && floor !== undefined) {
    const ratio = start.start_to_health_ms_median / Math.max(1, floor.start_to_health_ms_median);
    lines.push(
      `start: median of ${start.runs} starts alternating with a bare node:http /health server (the floor): ` +
        `gateway ${start.start_to_health_ms_median} ms, floor ${floor.start_to_health_ms_median} ms, ` +
        `${ratio.toFixed(2)}x the floor, +${start.start_to_health_ms_median - floor.start_to_health_ms_median} ms; ` +
        `first (coldest) start ${start.first_start_ms} ms`,
    );
  }
  return lines;
}
