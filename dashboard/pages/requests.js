// Requests: the request log (GET /admin/requests), newest first, with every filter of the API,
// "Load more" (keyset cursor), a live tail that adds new requests on top without touching the
// rest of the list, a detail drawer per request, and latency / error-rate charts.

import { api, query } from '../lib/api.js';
import { empty, field, h, replace, table } from '../lib/dom.js';
import { count, dollars } from '../lib/format.js';
import { failure, pageHeader, section } from '../lib/ui.js';
import { openRequestDrawer, statusBadge } from './request-drawer.js';
import { requestStatsSection } from './requests-stats.js';

const pageSize = 50;
const tailEveryMs = 2000;
const headers = ['Time', 'Status', 'Endpoint', 'Model', 'Served by', 'API key', 'User path', 'Latency', 'Tokens', 'Cost', 'Details'];
const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'medium' });

/** Every filter of GET /admin/requests: [query name, label, control, hint]. */
function filterControls() {
  const text = (name, placeholder) => h('input', { name, autocomplete: 'off', spellcheck: 'false', placeholder });
  const select = (name, options) =>
    h(
      'select',
      { name },
      options.map(([value, label]) => h('option', { value, text: label })),
    );
  return [
    ['from', 'From', h('input', { name: 'from', type: 'datetime-local' }), 'Your local time'],
    ['to', 'To', h('input', { name: 'to', type: 'datetime-local' }), null],
    ['user_path', 'User path', text('user_path', '/team (and below)'), null],
    ['api_key_id', 'API key id', text('api_key_id', 'key id'), null],
    ['provider', 'Provider', text('provider', 'openai'), null],
    ['model', 'Model', text('model', 'gpt-4o-mini'), null],
    [
      'status',
      'Status',
      select('status', [
        ['', 'Any'],
        ['200', '200'],
        ['2xx', '2xx'],
        ['4xx', '4xx'],
        ['429', '429'],
        ['5xx', '5xx'],
      ]),
      null,
    ],
    ['code', 'Error code', text('code', 'rate_limit_exceeded'), null],
    ['endpoint', 'Endpoint', text('endpoint', '/v1/chat/completions'), null],
    [
      'cache_hit',
      'Cache',
      select('cache_hit', [
        ['', 'Any'],
        ['true', 'Hits'],
        ['false', 'Misses'],
      ]),
      null,
    ],
    ['q', 'Request id', text('q', 'starts with…'), null],
  ];
}

/** Below this width the filters start folded: eleven fields would push the first row a screen down. */
const narrowScreen = '(max-width: 760px)';

/** The filters in a card that folds (open on wide screens, closed on narrow ones until asked for). */
function filtersCard(form) {
  return h(
    'details',
    { class: 'card filters-card', open: !window.matchMedia(narrowScreen).matches, dataset: { testid: 'filters-card' } },
    h('summary', { class: 'card-header' }, h('h2', { text: 'Filters' })),
    form,
  );
}

export function requestsPage(main) {
  const controls = filterControls();
  const listHolder = h('div', { dataset: { testid: 'requests' } });
  const more = h('button', { type: 'button', class: 'ghost', text: 'Load more', hidden: true });
  const tail = h('input', { type: 'checkbox', name: 'live_tail' });
  const status = h('p', { class: 'muted tail-status', role: 'status', 'aria-live': 'polite' });
  const stats = requestStatsSection();
  const state = { entries: [], seen: new Set(), cursor: null, body: null, generation: 0, timer: null, applied: {} };

  const filters = () => {
    const values = {};
    for (const [name, , control] of controls) {
      const value = control.value.trim();
      if (value === '') continue;
      values[name] = control.type === 'datetime-local' ? new Date(value).toISOString() : value;
    }
    return values;
  };

  const load = async (append) => {
    const mine = (state.generation += 1);
    if (!append) state.applied = filters();
    const params = { ...state.applied, limit: pageSize, cursor: append ? state.cursor : undefined };
    try {
      const page = await api('GET', `/admin/requests${query(params)}`);
      if (mine !== state.generation) return;
      if (!append) {
        state.entries = [];
        state.seen.clear();
      }
      const fresh = page.requests.filter((entry) => remember(state, entry));
      state.entries = state.entries.concat(fresh);
      state.cursor = page.next_cursor;
      more.hidden = state.cursor === null;
      if (!append || state.body === null) renderList(listHolder, state);
      else state.body.append(...decorated(fresh));
    } catch (error) {
      if (mine === state.generation) replace(listHolder, failure(error));
    }
  };

  const poll = async () => {
    const newest = state.entries[0];
    const given = state.applied;
    const from = newest ? newest.time : given.from;
    try {
      const page = await api('GET', `/admin/requests${query({ ...given, from, limit: 100 })}`);
      const fresh = page.requests.filter((entry) => remember(state, entry));
      if (fresh.length === 0) return;
      state.entries = fresh.concat(state.entries);
      if (state.body === null) renderList(listHolder, state);
      else state.body.prepend(...decorated(fresh));
      status.textContent = `Live tail: ${fresh.length} new request${fresh.length === 1 ? '' : 's'} at ${new Date().toLocaleTimeString()}.`;
    } catch (error) {
      status.textContent = `Live tail paused: ${error.message}`;
    }
  };

  const setTail = () => {
    clearInterval(state.timer);
    state.timer = tail.checked ? setInterval(poll, tailEveryMs) : null;
    status.textContent = tail.checked ? 'Live tail on: new requests appear at the top.' : 'Live tail off.';
  };
  tail.addEventListener('change', setTail);
  more.addEventListener('click', () => load(true));

  const form = h(
    'form',
    { class: 'inline-form', novalidate: true, dataset: { testid: 'request-filters' } },
    h(
      'div',
      { class: 'form-grid' },
      controls.map(([, label, control, hint]) => field(label, control, hint)),
    ),
    h(
      'div',
      { class: 'actions' },
      h('button', { type: 'reset', class: 'ghost', text: 'Clear' }),
      h('button', { type: 'submit', class: 'primary', text: 'Filter' }),
    ),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    load(false);
  });
  form.addEventListener('reset', () => setTimeout(() => load(false)));
  const tailToggle = h('label', { class: 'tail-toggle' }, tail, ' Live tail');
  replace(
    main,
    pageHeader(
      'Requests',
      'Every request that reached a model endpoint, newest first: why it failed, which target served it, what it cost.',
    ),
    filtersCard(form),
    section('Requests', [tailToggle], status, listHolder, h('div', { class: 'actions' }, more)),
    stats.element,
  );
  load(false);
  stats.refresh();
  return () => {
    clearInterval(state.timer);
    state.generation += 1;
    stats.stop();
  };
}

/** Records an entry as shown; false when it already is (a live tail overlapping the list). */
function remember(state, entry) {
  const key = `${entry.time}|${entry.id}`;
  if (state.seen.has(key)) return false;
  state.seen.add(key);
  return true;
}

function renderList(holder, state) {
  if (state.entries.length === 0) {
    state.body = null;
    replace(holder, empty('No requests match.'));
    return;
  }
  const wrap = table(headers, entryRows(state.entries), { label: 'Requests' });
  state.body = wrap.querySelector('tbody');
  replace(holder, wrap);
}

/** Rows for appending to the shown table, labelled like table() labels its rows. */
function decorated(entries) {
  return [...table(headers, entryRows(entries)).querySelectorAll('tbody tr')];
}

function entryRows(entries) {
  return entries.map((entry) => {
    const details = h('button', {
      type: 'button',
      class: 'small',
      text: 'Details',
      'aria-label': `Details of request ${entry.id}`,
    });
    details.addEventListener('click', () => openRequestDrawer(entry, details));
    return h(
      'tr',
      { dataset: { id: entry.id, status: String(entry.status), provider: entry.provider ?? '' } },
      h('td', { text: timeFormat.format(new Date(entry.time)) }),
      h('td', {}, statusBadge(entry.status), entry.error_code ? h('small', { class: 'muted', text: ` ${entry.error_code}` }) : null),
      h('td', {}, h('code', { text: entry.endpoint })),
      h('td', {}, entry.model_requested ? h('code', { text: entry.model_requested }) : '—'),
      h('td', {}, entry.provider ? h('code', { text: `${entry.provider}/${entry.model ?? '?'}` }) : '—'),
      h('td', { text: entry.api_key_id ? (entry.api_key_name ?? entry.api_key_id) : '—' }),
      h('td', {}, h('code', { text: entry.user_path })),
      h('td', { class: 'number', text: `${entry.latency_ms} ms` }),
      h('td', { class: 'number', text: count(entry.total_tokens) }),
      h('td', { class: 'number', text: dollars(entry.cost_usd) }),
      h('td', { class: 'row-actions' }, details),
    );
  });
}
