// The Requests page's charts: p50/p95 latency and error rate per provider or model
// (GET /admin/requests/stats), with a table holding the same figures.

import { api, query } from '../lib/api.js';
import { empty, field, h, replace, table } from '../lib/dom.js';
import { count } from '../lib/format.js';
import { keyedBars } from '../lib/key-bars.js';
import { failure, section } from '../lib/ui.js';

const spans = [
  { value: '1h', label: 'Last hour', milliseconds: 3_600_000 },
  { value: '24h', label: 'Last 24 hours', milliseconds: 86_400_000 },
  { value: '7d', label: 'Last 7 days', milliseconds: 7 * 86_400_000 },
];

/** The section; `refresh()` reloads it; `stop()` ends its resize tracking. */
export function requestStatsSection() {
  const groupBy = h(
    'select',
    { name: 'stats_group_by' },
    h('option', { value: 'provider', text: 'Provider' }),
    h('option', { value: 'model', text: 'Model' }),
  );
  const span = h(
    'select',
    { name: 'stats_span' },
    spans.map((one) => h('option', { value: one.value, text: one.label, selected: one.value === '24h' })),
  );
  const holder = h('div', { dataset: { testid: 'request-stats' } });
  let stopCharts = () => {};
  let generation = 0;

  const refresh = async () => {
    const mine = (generation += 1);
    const chosen = spans.find((one) => one.value === span.value) ?? spans[1];
    const path = `/admin/requests/stats${query({ group_by: groupBy.value, from: new Date(Date.now() - chosen.milliseconds).toISOString() })}`;
    try {
      const stats = await api('GET', path);
      // A slower earlier answer must not replace a newer one.
      if (mine !== generation) return;
      stopCharts();
      stopCharts = render(holder, stats, groupBy.value === 'provider' ? 'Provider' : 'Model');
    } catch (error) {
      if (mine === generation) replace(holder, failure(error));
    }
  };
  groupBy.addEventListener('change', refresh);
  span.addEventListener('change', refresh);
  const controls = h('div', { class: 'filters' }, field('Group by', groupBy), field('Period', span));
  const element = section('Latency and errors', [], controls, holder);
  return { element, refresh, stop: () => stopCharts() };
}

function render(holder, stats, dimension) {
  if (stats.groups.length === 0) {
    replace(holder, empty('No requests in this period.'));
    return () => {};
  }
  const named = stats.groups.map((group) => ({ ...group, name: group.key ?? '(none)' }));
  const latency = h('div', { class: 'chart-holder', dataset: { testid: 'latency-chart' } });
  const errors = h('div', { class: 'chart-holder', dataset: { testid: 'error-chart' } });
  const note = stats.truncated
    ? h('p', { class: 'muted', text: `Figures cover the newest ${count(stats.rows)} requests of the period.` })
    : null;
  replace(
    holder,
    h('h3', { text: 'p95 latency' }),
    latency,
    h('h3', { text: 'Error rate' }),
    errors,
    note,
    table(
      [dimension, 'Requests', 'Errors', 'Error rate', 'p50 latency', 'p95 latency'],
      named.map((group) =>
        h(
          'tr',
          { dataset: { key: group.name } },
          h('td', {}, h('code', { text: group.name })),
          h('td', { class: 'number', text: count(group.requests) }),
          h('td', { class: 'number', text: count(group.errors) }),
          h('td', { class: 'number', text: percent(group.error_rate) }),
          h('td', { class: 'number', text: `${group.p50_latency_ms} ms` }),
          h('td', { class: 'number', text: `${group.p95_latency_ms} ms` }),
        ),
      ),
      { label: `Latency and errors by ${dimension.toLowerCase()}` },
    ),
  );
  const stops = [
    keyedBars(latency, {
      groups: named.map((group) => ({ key: group.name, value: group.p95_latency_ms, detail: `p50 ${group.p50_latency_ms} ms` })),
      unit: 'ms',
      label: `p95 latency by ${dimension.toLowerCase()}`,
    }),
    keyedBars(errors, {
      groups: named.map((group) => ({ key: group.name, value: group.error_rate * 100, detail: `${group.errors} of ${group.requests}` })),
      unit: '%',
      label: `Error rate by ${dimension.toLowerCase()}`,
    }),
  ];
  return () => stops.forEach((stop) => stop());
}

function percent(rate) {
  return `${(rate * 100).toLocaleString(undefined, { maximumFractionDigits: 1 })}%`;
}
