// Audit: every change made through the admin API (GET /admin/audit), newest first, with filters and "Load more".

import { api } from '../lib/api.js';
import { empty, field, h, replace, table } from '../lib/dom.js';
import { when } from '../lib/format.js';
import { failure, pageHeader, section } from '../lib/ui.js';

const pageSize = 50;

export function auditPage(main) {
  const listHolder = h('div', { dataset: { testid: 'audit' } });
  const more = h('button', { type: 'button', class: 'ghost', text: 'Load more', hidden: true });
  const inputs = ['actor', 'action', 'resource'].map((name) => h('input', { name, autocomplete: 'off', spellcheck: 'false' }));
  let entries = [];
  let cursor = null;

  const load = async (append) => {
    const query = new URLSearchParams({ limit: String(pageSize) });
    for (const input of inputs) if (input.value.trim() !== '') query.set(input.name, input.value.trim());
    if (append && cursor !== null) query.set('cursor', cursor);
    try {
      const page = await api('GET', `/admin/audit?${query}`);
      entries = append ? entries.concat(page.entries) : page.entries;
      cursor = page.next_cursor;
      more.hidden = cursor === null;
      replace(listHolder, entries.length === 0 ? empty('No admin changes recorded.') : entriesTable(entries));
    } catch (error) {
      replace(listHolder, failure(error));
    }
  };
  more.addEventListener('click', () => load(true));
  const filters = h(
    'form',
    { class: 'inline-form', novalidate: true, dataset: { testid: 'audit-filters' } },
    h(
      'div',
      { class: 'form-grid' },
      field('Actor', inputs[0], 'master, a key id or jwt:<sub>'),
      field('Action', inputs[1], 'create, update, upsert, delete, rotate, ...'),
      field('Resource', inputs[2], 'api-keys, budgets, virtual-models/<name>, ...'),
    ),
    h('div', { class: 'actions' }, h('button', { type: 'submit', class: 'primary', text: 'Filter' })),
  );
  filters.addEventListener('submit', (event) => {
    event.preventDefault();
    load(false);
  });
  replace(
    main,
    pageHeader('Audit', 'Who changed what through the admin API, with the items before and after (secrets shown as ***).'),
    section('Filters', [], filters),
    section('Changes', [], listHolder, h('div', { class: 'actions' }, more)),
  );
  load(false);
  return () => {};
}

function entriesTable(entries) {
  const json = (value) => (value === null ? '—' : h('pre', { class: 'audit-json', text: JSON.stringify(value, null, 2) }));
  const rows = entries.map((entry) =>
    h(
      'tr',
      { dataset: { id: entry.id, resource: entry.resource, action: entry.action } },
      h('td', { text: when(entry.time) }),
      h('td', {}, h('code', { text: entry.actor })),
      h('td', { text: entry.action }),
      h('td', {}, h('code', { text: entry.resource })),
      h('td', {}, json(entry.before)),
      h('td', {}, json(entry.after)),
    ),
  );
  return table(['Time', 'Actor', 'Action', 'Resource', 'Before', 'After'], rows, { label: 'Admin changes' });
}
