// API keys: create (the key is shown once, with a copy button), list, deactivate.

import { api } from '../lib/api.js';
import { badge, empty, field, h, replace, table } from '../lib/dom.js';
import { count, dollars, when } from '../lib/format.js';
import { confirmAction, errorLine, failure, notify, pageHeader, section } from '../lib/ui.js';

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
      replace(listHolder, keysTable(await api('GET', `/admin/api-keys?window=${usageWindow.value}`), load));
    } catch (error) {
      replace(listHolder, failure(error));
    }
  };
  replace(
    main,
    pageHeader(
      'API keys',
      'Managed keys call the model endpoints and /mcp (never /admin). A key bound to a user path is always charged to it.',
    ),
    section('New key', [], createForm(created, load), created),
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

/** The new key, shown once: it is not stored anywhere the dashboard can read it again. */
function showCreated(holder, key) {
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
    h('p', {}, h('strong', { text: `Key “${key.name}” created. ` }), 'Copy it now: it is shown only once and cannot be recovered.'),
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

function keysTable(keys, reload) {
  if (keys.length === 0) return empty('No managed keys yet.');
  return table(
    ['Name', 'Key', 'User path', 'Status', 'Created', 'Expires', 'Last used', 'Requests', 'Cost', ''],
    keys.map((key) =>
      h(
        'tr',
        { dataset: { id: key.id } },
        h('td', { text: key.name }),
        h('td', {}, h('code', { text: key.redacted })),
        h('td', {}, key.user_path ? h('code', { text: key.user_path }) : h('span', { class: 'muted', text: 'from X-User-Path' })),
        h('td', {}, status(key)),
        h('td', { text: when(key.created_at) }),
        h('td', { text: key.expires_at ? when(key.expires_at) : 'never' }),
        h('td', { class: 'key-last-used', text: key.last_used_at ? when(key.last_used_at) : '—' }),
        h('td', { class: 'number key-requests', text: count(key.requests) }),
        h('td', { class: 'number key-cost', text: dollars(key.cost_usd) }),
        h(
          'td',
          { class: 'row-actions' },
          key.active
            ? h('button', {
                'data-write': true,
                type: 'button',
                class: 'small danger-outline',
                text: 'Deactivate',
                onclick: () => deactivate(key, reload),
              })
            : null,
        ),
      ),
    ),
    { label: 'API keys' },
  );
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
