// Usage and budgets: requests, tokens and cost over time by user path, provider, model or API key
// (GET /admin/usage with a bucket), and budgets with their spend.

import { aborted, api, query } from '../lib/api.js';
import { legend, stackedBars } from '../lib/chart.js';
import { empty, field, h, patch, replace, table } from '../lib/dom.js';
import { count, dollars } from '../lib/format.js';
import { every, liveStatus, unreachable } from '../lib/live.js';
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
  // An unpriced group (cost_usd null) draws no cost; the totals below show "—" for it.
  cost_usd: { label: 'Cost (USD)', of: (row) => row.cost_usd ?? 0, format: 'dollars' },
};
const dimensions = { user_path: 'User path', provider: 'Provider', model: 'Model', api_key: 'API key' };
/** Series beyond this many are summed into "other", so colours stay readable. */
const maximumSeries = 6;

const refreshMilliseconds = 10_000;
const defaults = { range: '24h', group_by: 'user_path', metric: 'requests', user_path: '' };

export function usagePage(main) {
  const controls = filterControls(filtersFromUrl());
  const view = {
    summary: h('div', { class: 'stats' }),
    chart: h('div', { class: 'chart-holder', dataset: { testid: 'usage-chart' } }),
    chartLegend: h('div'),
    totals: h('div'),
  };
  const status = liveStatus();
  const budgets = budgetsSection();
  const usage = usageLoader(controls, view);
  const changed = () => {
    filtersToUrl(controls);
    usage.load();
  };
  for (const control of Object.values(controls)) control.addEventListener('change', changed);
  const filters = h(
    'form',
    { class: 'filters', onsubmit: (event) => (event.preventDefault(), changed()) },
    field('Range', controls.range),
    field('Group by', controls.groupBy),
    field('Show', controls.metric),
    field('User path', controls.userPath),
  );
  replace(
    main,
    pageHeader(
      'Usage & budgets',
      'From the usage records of executed requests (USAGE_ENABLED). Times are UTC days or your local hours.',
      status.element,
    ),
    section('Usage', [], filters, view.summary, view.chart, view.chartLegend, view.totals),
    budgets.element,
  );
  // Both refresh on their own (paused while the tab is hidden), updating in place.
  const stop = every(refreshMilliseconds, async () => {
    const answered = await Promise.all([usage.load(), budgets.load()]);
    if (answered.every(Boolean)) status.ok();
    else status.failed();
  });
  return () => {
    stop();
    usage.stop();
  };
}

/**
 * Loads the series for the current filters. Only the newest load may draw: a new one aborts
 * the one before, and an answer that arrives after a newer load started is dropped (the chart
 * never shows the data of filters no longer selected). `load()` resolves with whether the
 * gateway answered.
 */
function usageLoader(controls, view) {
  let stopChart = () => {};
  let newest = null;
  let shown = null;
  const load = async () => {
    newest?.abort();
    const controller = new window.AbortController();
    newest = controller;
    let data;
    try {
      data = await fetchSeries(controls, controller.signal);
    } catch (error) {
      if (aborted(error) || newest !== controller) return true;
      // Stale numbers stay on screen while the gateway is unreachable; the status line says Offline.
      if (unreachable(error) && shown !== null) return false;
      showFailure(error, view);
      shown = null;
      return !unreachable(error);
    }
    if (newest !== controller) return true;
    // A refresh that brings the same numbers leaves the page alone.
    const fingerprint = JSON.stringify([data.rows, data.buckets, data.metric.label, data.dimension]);
    if (fingerprint === shown) return true;
    shown = fingerprint;
    stopChart();
    stopChart = render(data, view);
    return true;
  };
  return {
    load,
    stop() {
      newest?.abort();
      stopChart();
    },
  };
}

function showFailure(error, { summary, chart, chartLegend, totals }) {
  replace(chart, failure(error));
  summary.replaceChildren();
  chartLegend.replaceChildren();
  totals.replaceChildren();
}

/** The filters in the page's address (#/usage?range=7d&group_by=model...); unknown values give the defaults. */
function filtersFromUrl() {
  const params = new URLSearchParams(location.hash.split('?')[1] ?? '');
  const pick = (name, allowed) => {
    const value = params.get(name);
    return value !== null && Object.hasOwn(allowed, value) ? value : defaults[name];
  };
  return {
    range: pick('range', ranges),
    group_by: pick('group_by', dimensions),
    metric: pick('metric', metrics),
    user_path: params.get('user_path') ?? '',
  };
}

/** A new history entry with the filters (Back returns to the previous ones; a reload keeps them). */
function filtersToUrl(controls) {
  const values = {
    range: controls.range.value,
    group_by: controls.groupBy.value,
    metric: controls.metric.value,
    user_path: controls.userPath.value.trim(),
  };
  const params = new URLSearchParams(Object.entries(values).filter(([name, value]) => value !== defaults[name]));
  const text = params.toString();
  const hash = `#/usage${text === '' ? '' : `?${text}`}`;
  if (location.hash !== hash) history.pushState(null, '', hash);
}

function filterControls(filters) {
  return {
    range: select(
      'range',
      Object.entries(ranges).map(([value, range]) => [value, range.label]),
      filters.range,
    ),
    groupBy: select('group_by', Object.entries(dimensions), filters.group_by),
    metric: select(
      'metric',
      Object.entries(metrics).map(([value, metric]) => [value, metric.label]),
      filters.metric,
    ),
    userPath: h('input', {
      name: 'user_path',
      placeholder: '/ (everything)',
      autocomplete: 'off',
      spellcheck: 'false',
      value: filters.user_path,
    }),
  };
}

function select(name, options, selected) {
  return h(
    'select',
    { name },
    options.map(([value, label]) => h('option', { value, selected: value === selected, text: label })),
  );
}

async function fetchSeries(controls, signal) {
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
    undefined,
    { signal },
  );
  const buckets = Array.from({ length: range.buckets }, (_, index) => from + index * range.size);
  const rows = controls.groupBy.value === 'api_key' ? await namedByKey(data.rows, signal) : data.rows;
  return { rows, buckets, range, metric: metrics[controls.metric.value], dimension: dimensions[controls.groupBy.value] };
}

/** Rows grouped by API key id, keyed by the key's name and redacted form instead (null: no key). */
async function namedByKey(rows, signal) {
  const keys = await api('GET', '/admin/api-keys?window=24h', undefined, { signal });
  const names = new Map(keys.map((key) => [key.id, `${key.name} (${key.redacted})`]));
  return rows.map((row) => ({ ...row, key: row.key === null ? 'no key (master key or open)' : (names.get(row.key) ?? row.key) }));
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
    stat('Cost', dollars(grand.cost_usd), unpricedNote(grand.unpriced_requests)),
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
  patch(
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
          h('td', { class: 'number', title: unpricedNote(row.unpriced_requests), text: dollars(row.cost_usd) }),
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

const countFields = ['requests', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'unpriced_requests'];

/** Sums counts; a cost is unknown (null) as soon as one part of it is. */
function addTotals(into, row) {
  for (const name of countFields) into[name] = (into[name] ?? 0) + (row[name] ?? 0);
  into.cost_usd = into.cost_usd === null || row.cost_usd === null ? null : (into.cost_usd ?? 0) + (row.cost_usd ?? 0);
  return into;
}

/** "3 requests without a price" (why a cost shows "—"), or nothing. */
function unpricedNote(unpriced) {
  if (!unpriced) return undefined;
  return `${count(unpriced)} ${unpriced === 1 ? 'request' : 'requests'} without a price: cost unknown`;
}

function totalsByKey(rows) {
  const byKey = new Map();
  for (const row of rows) addTotals(byKey.get(row.key) ?? byKey.set(row.key, { key: row.key }).get(row.key), row);
  return [...byKey.values()].sort((a, b) => b.requests - a.requests);
}

function stat(label, value, note) {
  return h(
    'div',
    { class: 'stat', dataset: { stat: label.toLowerCase() } },
    h('span', { class: 'stat-label', text: label }),
    h('strong', { class: 'stat-value', text: value }),
    note ? h('small', { class: 'muted', text: note }) : null,
  );
}
