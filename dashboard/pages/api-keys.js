// API keys: create with a role and allowlists (the key is shown once, with a copy button), list
// with role, last use and spend, rotate with a grace period, deactivate.

import { api } from '../lib/api.js';
import { badge, empty, field, h, replace, table } from '../lib/dom.js';
import { count, dollars, when } from '../lib/format.js';
import { confirmAction, errorLine, failure, formDialog, notify, pageHeader, section } from '../lib/ui.js';

export function apiKeysPage(main) {
  const listHolder = h('div', { dataset: { testid: 'api-keys' } });
  const created = h('div', { class: 'created-key', hidden: true, role: 'status' });
  // Per-key usage over a window (last use, requests, cost), from the request log.
  const usageWindow = h(
    'select',
    { name: 'window', 'aria-label': 'Usage window' },
    [
      ['24h', 'Last 24 hours'],
      ['7d', 'Last 7 days'],
      ['30d', 'Last 30 days'],
    ].map(([value, label]) => h('option', { value, text: label, selected: value === '30d' })),
  );
  const load = async () => {
    try {
      replace(listHolder, keysTable(await api('GET', `/admin/api-keys?window=${usageWindow.value}`), load, created));
    } catch (error) {
      replace(listHolder, failure(error));
    }
  };
  const newKey = section('New key', [], createForm(created, load), created);
  // A viewer sees no empty card: the whole section is a write control.
  newKey.setAttribute('data-write', '');
  replace(
    main,
    pageHeader(
      'API keys',
      'Keys with the user role call the model endpoints and /mcp; viewer keys may also read /admin and this dashboard, admin keys may also change it. A key bound to a user path is always charged to it.',
    ),
    newKey,
    section('Keys', [usageWindow], listHolder),
  );
  usageWindow.addEventListener('change', load);
  load();
  return () => {};
}

function createForm(created, reload) {
  const error = errorLine();
  const name = h('input', { name: 'name', required: true, autocomplete: 'off', placeholder: 'billing-service' });
  const userPath = h('input', { name: 'user_path', autocomplete: 'off', spellcheck: 'false', placeholder: '/team/app (optional)' });
  const expires = h('input', { name: 'expires_at', type: 'datetime-local' });
  const role = h(
    'select',
    { name: 'role' },
    roles.map((value) => h('option', { value, text: value })),
  );
  const models = h('input', { name: 'allowed_models', autocomplete: 'off', spellcheck: 'false', placeholder: 'openai/*, chat-default' });
  const endpoints = h('input', {
    name: 'allowed_endpoints',
    autocomplete: 'off',
    spellcheck: 'false',
    placeholder: '/v1/chat/completions, /mcp',
  });
  const submit = h('button', { type: 'submit', class: 'primary', text: 'Create key' });
  const form = h(
    'form',
    { 'data-write': true, class: 'inline-form', novalidate: true, dataset: { testid: 'create-key' } },
    h(
      'div',
      { class: 'form-grid' },
      field('Name', name),
      field('User path', userPath, 'Requests with this key are charged to this path.'),
      field('Expires', expires, 'Optional; your local time.'),
      field('Role', role, 'user: model endpoints and /mcp; viewer: also reads /admin; admin: also changes it.'),
      field('Allowed models', models, 'Comma-separated selectors; empty: every model.'),
      field('Allowed endpoints', endpoints, 'Comma-separated paths; empty: every endpoint.'),
    ),
    error.element,
    h('div', { class: 'actions' }, submit),
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.clear();
    submit.disabled = true;
    try {
      const body = { name: name.value };
      if (userPath.value.trim() !== '') body.user_path = userPath.value.trim();
      if (expires.value !== '') body.expires_at = new Date(expires.value).toISOString();
      if (role.value !== 'user') body.role = role.value;
      const allowedModels = listOf(models.value);
      if (allowedModels !== null) body.allowed_models = allowedModels;
      const allowedEndpoints = listOf(endpoints.value);
      if (allowedEndpoints !== null) body.allowed_endpoints = allowedEndpoints;
      const key = await api('POST', '/admin/api-keys', body);
      showCreated(created, key);
      form.reset();
      await reload();
    } catch (failure) {
      error.show(failure);
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

const roles = ['user', 'viewer', 'admin'];

/** "a, b" as a list; an empty field is no restriction (null). */
function listOf(text) {
  const entries = text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  return entries.length === 0 ? null : entries;
}

/** An allowlist cell: "all" for none, else the entries. */
function allowed(entries) {
  if (entries === null || entries === undefined) return h('span', { class: 'muted', text: 'all' });
  if (entries.length === 0) return h('span', { class: 'muted', text: 'none' });
  return h('code', { text: entries.join(', ') });
}

/** The new key, shown once: it is not stored anywhere the dashboard can read it again. */
function showCreated(holder, key, verb = 'created') {
  const value = h('input', {
    class: 'secret',
    readonly: true,
    value: key.key,
    'aria-label': 'New API key',
    dataset: { testid: 'new-key' },
  });
  const copy = h('button', {
    type: 'button',
    class: 'small',
    text: 'Copy',
    onclick: async () => {
      try {
        await navigator.clipboard.writeText(key.key);
        copy.textContent = 'Copied';
      } catch {
        value.select();
        copy.textContent = 'Press Ctrl+C';
      }
    },
  });
  replace(
    holder,
    h('p', {}, h('strong', { text: `Key “${key.name}” ${verb}. ` }), 'Copy it now: it is shown only once and cannot be recovered.'),
    h(
      'div',
      { class: 'secret-row' },
      value,
      copy,
      h('button', { type: 'button', class: 'small ghost', text: 'Done', onclick: () => (holder.hidden = true) }),
    ),
  );
  holder.hidden = false;
  value.focus();
  value.select();
}

function status(key) {
  if (key.active) return badge('active', 'ok');
  if (key.deactivated_at) return badge('deactivated', 'muted');
  return badge('expired', 'bad');
}

function keysTable(keys, reload, created) {
  if (keys.length === 0) return empty('No managed keys yet.');
  return table(
    ['Name', 'Key', 'Role', 'User path', 'Models', 'Endpoints', 'Status', 'Created', 'Expires', 'Last used', 'Requests', 'Cost', ''],
    keys.map((key) =>
      h(
        'tr',
        { dataset: { id: key.id } },
        h('td', { text: key.name }),
        h('td', {}, h('code', { text: key.redacted })),
        h('td', { class: 'key-role' }, badge(key.role ?? 'user', key.role === 'admin' ? 'warn' : 'neutral')),
        h('td', {}, key.user_path ? h('code', { text: key.user_path }) : h('span', { class: 'muted', text: 'from X-User-Path' })),
        h('td', { class: 'key-models' }, allowed(key.allowed_models)),
        h('td', { class: 'key-endpoints' }, allowed(key.allowed_endpoints)),
        h('td', {}, status(key), key.previous_key_expires_at ? previousKey(key.previous_key_expires_at) : null),
        h('td', { text: when(key.created_at) }),
        h('td', { text: key.expires_at ? when(key.expires_at) : 'never' }),
        h('td', { class: 'key-last-used', text: key.last_used_at ? when(key.last_used_at) : '—' }),
        h('td', { class: 'number key-requests', text: count(key.requests) }),
        h('td', { class: 'number key-cost', text: dollars(key.cost_usd) }),
        h(
          'td',
          { class: 'row-actions' },
          key.active
            ? [
                h('button', {
                  'data-write': true,
                  type: 'button',
                  class: 'small ghost',
                  text: 'Rotate',
                  onclick: () => rotate(key, reload, created),
                }),
                h('button', {
                  'data-write': true,
                  type: 'button',
                  class: 'small danger-outline',
                  text: 'Deactivate',
                  onclick: () => deactivate(key, reload),
                }),
              ]
            : null,
        ),
      ),
    ),
    { label: 'API keys' },
  );
}

/** The old secret of a rotated key, still accepted until its grace period ends. */
function previousKey(until) {
  return h('small', { class: 'muted key-previous', text: ` old key valid until ${when(until)}` });
}

/** A new secret for the key; the old one keeps working for `grace_seconds`. */
function rotate(key, reload, created) {
  formDialog({
    title: 'Rotate this key?',
    testId: 'rotate-dialog',
    intro: [
      h('code', { text: `${key.name} (${key.redacted})` }),
      ' gets a new secret, shown once. The old one keeps working for the grace period.',
    ],
    submitLabel: 'Rotate',
    build() {
      const grace = h('input', { name: 'grace_seconds', type: 'number', min: '0', max: '2592000', step: '1', value: '3600' });
      return field('Grace period (seconds)', grace, '0 ends the old key at once; at most 30 days (2592000).');
    },
    async submit(form) {
      const text = form.elements.namedItem('grace_seconds').value.trim();
      const rotated = await api('POST', `/admin/api-keys/${encodeURIComponent(key.id)}/rotate`, {
        grace_seconds: text === '' ? 0 : Number(text),
      });
      showCreated(created, rotated, 'rotated');
      await reload();
    },
  });
}

function deactivate(key, reload) {
  confirmAction({
    title: 'Deactivate this key?',
    testId: 'confirm-dialog',
    message: [h('code', { text: `${key.name} (${key.redacted})` }), ' stops working at once. This cannot be undone.'],
    confirmLabel: 'Deactivate',
    async action() {
      await api('POST', `/admin/api-keys/${encodeURIComponent(key.id)}/deactivate`, {});
      notify('Key deactivated.');
      await reload();
    },
  });
}
