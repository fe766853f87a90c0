// The Requests page's detail drawer: one request log entry (GET /admin/requests/{id}) with its
// attempt chain, the rate-limit rule that refused it, tokens, cost and the kept bodies. A modal
// dialog: Escape or "Close" closes it and focus goes back to the button that opened it.

import { api } from '../lib/api.js';
import { badge, h, replace, table } from '../lib/dom.js';
import { count, dollars, when } from '../lib/format.js';
import { failure } from '../lib/ui.js';

/** Opens the drawer for `entry` (a listed entry); `opener` gets the focus back on close. */
export function openRequestDrawer(entry, opener) {
  const titleId = `drawer-title-${Math.random().toString(36).slice(2)}`;
  const body = h('div', { class: 'drawer-body' }, h('p', { class: 'muted', text: 'Loading…' }));
  const close = h('button', { type: 'button', class: 'ghost', text: 'Close' });
  const dialog = h(
    'dialog',
    { class: 'dialog drawer', 'aria-labelledby': titleId, dataset: { testid: 'request-drawer' } },
    h('header', { class: 'drawer-header' }, h('h2', { id: titleId }, 'Request ', h('code', { text: entry.id })), close),
    body,
  );
  close.addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => {
    dialog.remove();
    if (opener && opener.isConnected) opener.focus();
  });
  document.body.append(dialog);
  dialog.showModal();
  close.focus();
  api('GET', `/admin/requests/${encodeURIComponent(entry.id)}`)
    .then((full) => replace(body, details(full)))
    .catch((error) => replace(body, failure(error)));
  return dialog;
}

export function statusBadge(status) {
  return badge(String(status), status >= 500 ? 'bad' : status >= 400 ? 'warn' : 'ok');
}

function details(entry) {
  return [
    facts([
      ['Time', when(entry.time)],
      ['Status', statusBadge(entry.status)],
      ['Error', entry.error_code ? `${entry.error_type ?? 'error'} · ${entry.error_code}` : '—'],
      ['Endpoint', code(entry.endpoint)],
      ['Model asked', code(entry.model_requested)],
      ['Virtual model', code(entry.virtual_model)],
      ['Served by', entry.provider ? code(`${entry.provider}/${entry.model ?? '?'}`) : '—'],
      ['API key', entry.api_key_id ? `${entry.api_key_name ?? 'unnamed'} (${entry.api_key_id})` : '—'],
      ['User path', code(entry.user_path)],
      ['Latency', `${entry.latency_ms} ms`],
      ['Time to first byte', entry.ttft_ms === null ? '—' : `${entry.ttft_ms} ms`],
      ['Tokens', `${count(entry.prompt_tokens)} in · ${count(entry.completion_tokens)} out · ${count(entry.total_tokens)} total`],
      ['Cost', dollars(entry.cost_usd)],
      ['Cache hit', entry.cache_hit ? 'yes' : 'no'],
      ['Stream', entry.stream ? 'yes' : 'no'],
      ['User agent', entry.user_agent ?? '—'],
    ]),
    entry.rate_limit ? rateLimit(entry.rate_limit) : null,
    h('h3', { text: 'Attempts' }),
    attempts(entry.attempts),
    h('h3', { text: 'Bodies' }),
    entry.request_body === null && entry.response_body === null
      ? h('p', { class: 'muted', text: 'Not kept (REQUEST_LOG_BODIES is off, or errors only).' })
      : [bodyBlock('Request body', entry.request_body), bodyBlock('Response body', entry.response_body)],
  ];
}

function facts(pairs) {
  return h(
    'dl',
    { class: 'facts' },
    pairs.map(([term, value]) => [h('dt', { text: term }), h('dd', {}, value ?? '—')]),
  );
}

function code(value) {
  return value === null || value === undefined ? '—' : h('code', { text: value });
}

function rateLimit(rule) {
  return h(
    'section',
    { class: 'rate-limit-reason', dataset: { testid: 'rate-limit-reason' }, 'aria-label': 'Rate limit' },
    h('h3', { text: 'Refused by a rate limit' }),
    facts([
      ['Scope', rule.scope],
      ['Subject', code(rule.subject)],
      ['Period', rule.period],
      ['Kind', rule.kind],
    ]),
  );
}

function attempts(list) {
  if (list.length === 0) return h('p', { class: 'muted', text: 'No upstream attempt (refused or answered by the gateway).' });
  return table(
    ['#', 'Provider', 'Model', 'Status', 'Latency', 'Error code'],
    list.map((attempt, index) =>
      h(
        'tr',
        { dataset: { provider: attempt.provider } },
        h('td', { class: 'number', text: String(index + 1) }),
        h('td', {}, code(attempt.provider)),
        h('td', {}, code(attempt.model)),
        h('td', {}, attempt.status === null ? '—' : statusBadge(attempt.status)),
        h('td', { class: 'number', text: attempt.latency_ms === null ? '—' : `${attempt.latency_ms} ms` }),
        h('td', {}, attempt.error_code ? code(attempt.error_code) : '—'),
      ),
    ),
    { label: 'Attempts', class: 'attempts' },
  );
}

function bodyBlock(label, text) {
  return h(
    'div',
    {},
    h('h4', { text: label }),
    text === null ? h('p', { class: 'muted', text: 'Not kept.' }) : h('pre', { class: 'body-text', text }),
  );
}
