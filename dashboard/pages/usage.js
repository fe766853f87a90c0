// Usage and budgets: requests, tokens and cost over time by user path, provider or model
// (GET /admin/usage with a bucket), and budgets with their spend.

import { api, query } from '../lib/api.js';
import { legend, stackedBars } from '../lib/chart.js';
import { empty, field, h, replace, table } from '../lib/dom.js';
import { count, dollars } from '../lib/format.js';
import { failure, pageHeader, section } from '../lib/ui.js';
import { budgetsSection } from './budgets.js';

const hour = 3_600_000;
const day = 86_400_000;
const ranges = {
  '24h': { label: 'Last 24 hours', bucket: 'hour', size: hour, buckets: 24 },
  '7d': { label: 'Last 7 days', bucket: 'day', size: day, buckets: 7 },
  '30d': { label: 'Last 30 days', bucket: 'day', size: day, buckets: 30 },
};
const metrics = {
  requests: { label: 'Requests', of: (row) => row.requests, format: 'count' },
  total_tokens: { label: 'Tokens', of: (row) => row.total_tokens, format: 'count' },
  cost_usd: { label: 'Cost (USD)', of: (row) => row.cost_usd, format: 'dollars' },
};
const dimensions = { user_path: 'User path', provider: 'Provider', model: 'Model' };
/** Series beyond this many are summed into "other", so colours stay readable. */
const maximumSeries = 6;

export function usagePage(main) {
  const controls = {
    range: select(
      'range',
      Object.entries(ranges).map(([value, range]) => [value, range.label]),
      '24h',
    ),
    groupBy: select('group_by', Object.entries(dimensions), 'user_path'),
    metric: select(
      'metric',
      Object.entries(metrics).map(([value, metric]) => [value, metric.label]),
      'requests',
    ),
    userPath: h('input', { name: 'user_path', placeholder: '/ (everything)', autocomplete: 'off', spellcheck: 'false' }),
  };
  const summary = h('div', { class: 'stats' });
  const chart = h('div', { class: 'chart-holder', dataset: { testid: 'usage-chart' } });
  const chartLegend = h('div');
  const totals = h('div');
  let stopChart = () => {};
  const load = async () => {
    stopChart();
    try {
      const data = await fetchSeries(controls);
      stopChart = render(data, { summary, chart, chartLegend, totals });
    } catch (error) {
      replace(chart, failure(error));
      summary.replaceChildren();
      chartLegend.replaceChildren();
      totals.replaceChildren();
    }
  };
  for (const control of [controls.range, controls.groupBy, controls.metric]) control.addEventListener('change', load);
  controls.userPath.addEventListener('change', load);
  const filters = h(
    'form',
    { class: 'filters', onsubmit: (event) => (event.preventDefault(), load()) },
    field('Range', controls.range),
    field('Group by', controls.groupBy),
    field('Show', controls.metric),
    field('User path', controls.userPath),
  );
  replace(
    main,
    pageHeader('Usage & budgets', 'From the usage records of executed requests (USAGE_ENABLED). Times are UTC days or your local hours.'),
    section('Usage', [], filters, summary, chart, chartLegend, totals),
    budgetsSection(),
  );
  load();
  return () => stopChart();
}

function select(name, options, selected) {
  return h(
    'select',
    { name },
    options.map(([value, label]) => h('option', { value, selected: value === selected, text: label })),
  );
}

async function fetchSeries(controls) {
  const range = ranges[controls.range.value];
  const now = Date.now();
  const lastStart = Math.floor(now / range.size) * range.size;
  const from = lastStart - (range.buckets - 1) * range.size;
  const data = await api(
    'GET',
    `/admin/usage${query({
      group_by: controls.groupBy.value,
      bucket: range.bucket,
      from: new Date(from).toISOString(),
      to: new Date(lastStart + range.size).toISOString(),
      user_path: controls.userPath.value.trim(),
    })}`,
  );
  const buckets = Array.from({ length: range.buckets }, (_, index) => from + index * range.size);
  return { rows: data.rows, buckets, range, metric: metrics[controls.metric.value], dimension: dimensions[controls.groupBy.value] };
}

/** Series per key (the biggest first, the tail summed into "other"), aligned on the buckets. */
export function seriesOf(rows, buckets, metric) {
  const byKey = new Map();
  const position = new Map(buckets.map((start, index) => [start, index]));
  for (const row of rows) {
    const index = position.get(Date.parse(row.bucket));
    if (index === undefined) continue;
    if (!byKey.has(row.key)) byKey.set(row.key, new Array(buckets.length).fill(0));
    byKey.get(row.key)[index] += metric.of(row);
  }
  const sum = (values) => values.reduce((total, value) => total + value, 0);
  const sorted = [...byKey].map(([key, values]) => ({ key, values, total: sum(values) })).sort((a, b) => b.total - a.total);
  if (sorted.length <= maximumSeries) return sorted;
  const rest = sorted.slice(maximumSeries - 1);
  const other = buckets.map((_, index) => sum(rest.map((one) => one.values[index])));
  return [...sorted.slice(0, maximumSeries - 1), { key: `other (${rest.length})`, values: other, total: sum(other) }];
}

function render({ rows, buckets, range, metric, dimension }, { summary, chart, chartLegend, totals }) {
  const all = totalsByKey(rows);
  const grand = all.reduce((sum, row) => addTotals(sum, row), addTotals({ key: 'all' }, {}));
  replace(
    summary,
    stat('Requests', count(grand.requests)),
    stat('Tokens', count(grand.total_tokens)),
    stat('Cost', dollars(grand.cost_usd)),
    stat(`${dimension}s`, count(all.length)),
  );
  if (rows.length === 0) {
    replace(chart, empty(`No usage in the ${range.label.toLowerCase()}.`));
    chartLegend.replaceChildren();
    totals.replaceChildren();
    return () => {};
  }
  const series = seriesOf(rows, buckets, metric);
  replace(chartLegend, legend(series));
  replace(
    totals,
    table(
      [dimension, 'Requests', 'Prompt tokens', 'Completion tokens', 'Total tokens', 'Cost'],
      all.map((row) =>
        h(
          'tr',
          { dataset: { key: row.key } },
          h('td', {}, h('code', { text: row.key })),
          ...[row.requests, row.prompt_tokens, row.completion_tokens, row.total_tokens].map((value) =>
            h('td', { class: 'number', text: count(value) }),
          ),
          h('td', { class: 'number', text: dollars(row.cost_usd) }),
        ),
      ),
      { label: `Usage by ${dimension}` },
    ),
  );
  return stackedBars(chart, {
    buckets,
    series,
    bucket: range.bucket,
    format: metric.format,
    label: `${metric.label} by ${dimension.toLowerCase()}, ${range.label.toLowerCase()}`,
  });
}

const totalFields = ['requests', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'cost_usd'];

function addTotals(into, row) {
  for (const name of totalFields) into[name] = (into[name] ?? 0) + (row[name] ?? 0);
  return into;
}

function totalsByKey(rows) {
  const byKey = new Map();
  for (const row of rows) addTotals(byKey.get(row.key) ?? byKey.set(row.key, { key: row.key }).get(row.key), row);
  return [...byKey.values()].sort((a, b) => b.requests - a.requests);
}

function stat(label, value) {
  return h('div', { class: 'stat' }, h('span', { class: 'stat-label', text: label }), h('strong', { class: 'stat-value', text: value }));
}
