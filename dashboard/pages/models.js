// Models: the model rows of each provider instance, and virtual models with their targets
// and strategies (create, edit, delete; config-declared ones read-only).

import { api } from '../lib/api.js';
import { badge, empty, h, replace, table } from '../lib/dom.js';
import { dollars } from '../lib/format.js';
import { confirmAction, failure, notify, pageHeader, section } from '../lib/ui.js';
import { virtualModelDialog } from './virtual-model-form.js';

export function modelsPage(main) {
  const virtualHolder = h('div', { dataset: { testid: 'virtual-models' } });
  const concreteHolder = h('div', { dataset: { testid: 'model-rows' } });
  const state = { rows: [], definitions: [] };
  const load = async () => {
    try {
      const [rows, definitions] = await Promise.all([api('GET', '/admin/models'), api('GET', '/admin/virtual-models')]);
      Object.assign(state, { rows, definitions });
      replace(virtualHolder, virtualTable(state, load));
      replace(concreteHolder, instanceTables(rows.filter((row) => row.kind === 'concrete')));
    } catch (error) {
      replace(virtualHolder, failure(error));
    }
  };
  const newButton = h('button', {
    'data-write': true,
    type: 'button',
    class: 'primary',
    text: 'New virtual model',
    onclick: () => virtualModelDialog(null, catalogOf(state.rows), load),
  });
  replace(
    main,
    pageHeader('Models', 'Models of each provider instance, and virtual models that route one name to several targets.'),
    section('Virtual models', [newButton], virtualHolder),
    section('Provider models', [], concreteHolder),
  );
  load();
  return () => {};
}

/** Instance names and their models, for the target editor. */
function catalogOf(rows) {
  const instances = new Map();
  for (const row of rows) {
    if (row.kind !== 'concrete') continue;
    if (!instances.has(row.instance)) instances.set(row.instance, []);
    instances.get(row.instance).push(row.model);
  }
  return instances;
}

function virtualTable(state, reload) {
  if (state.definitions.length === 0) return empty('No virtual models. Create one to give several targets a single model name.');
  const live = new Map(state.rows.filter((row) => row.kind === 'virtual').map((row) => [row.id, row]));
  return table(
    ['Name', 'Strategy', 'Targets', 'Available', 'Origin', ''],
    state.definitions.map((model) => {
      const row = live.get(model.name);
      const readOnly = model.origin === 'config';
      return h(
        'tr',
        { dataset: { name: model.name } },
        h(
          'td',
          {},
          h('code', { text: model.name }),
          model.description ? h('div', { class: 'muted small', text: model.description }) : null,
        ),
        h('td', {}, badge(model.strategy.replace('_', ' '), 'scope')),
        h('td', {}, targetList(model, row)),
        h('td', {}, availability(row?.available)),
        h('td', {}, readOnly ? badge('config · read-only', 'muted') : badge('manual', 'ok')),
        h(
          'td',
          { class: 'row-actions' },
          readOnly
            ? null
            : [
                h('button', {
                  'data-write': true,
                  type: 'button',
                  class: 'small',
                  text: 'Edit',
                  onclick: () => virtualModelDialog(model, catalogOf(state.rows), reload),
                }),
                h('button', {
                  'data-write': true,
                  type: 'button',
                  class: 'small danger-outline',
                  text: 'Delete',
                  onclick: () => deleteVirtual(model, reload),
                }),
              ],
        ),
      );
    }),
    { label: 'Virtual models' },
  );
}

function targetList(model, row) {
  return h(
    'ol',
    { class: 'targets' },
    model.targets.map((target, index) => {
      const resolved = row?.targets?.[index];
      const name = target.provider ? `${target.provider}/${target.model}` : target.model;
      return h(
        'li',
        {},
        h('code', { text: name }),
        model.strategy === 'round_robin' ? h('span', { class: 'muted', text: ` ×${target.weight}` }) : null,
        resolved
          ? h('span', {
              class: ['dot', resolved.available ? 'dot-ok' : 'dot-bad'],
              title: resolved.available ? 'available' : 'unavailable',
            })
          : null,
        resolved && resolved.resolved && resolved.resolved !== name
          ? h('span', { class: 'muted small', text: ` → ${resolved.resolved}` })
          : null,
      );
    }),
  );
}

/** closed: green; half-open (one probe call decides): amber; open: red. */
const circuitTones = { closed: 'ok', half_open: 'warn', open: 'bad' };

function circuitBadge(circuit) {
  const element = badge(`circuit ${String(circuit).replace('_', '-')}`, circuitTones[circuit] ?? 'muted');
  element.classList.add('circuit-badge');
  element.dataset.circuit = circuit;
  return element;
}

/** A model of a half-open instance is served only if the probe call succeeds: amber, as its circuit. */
function availability(available, circuit) {
  if (available === undefined) return '—';
  if (!available) return badge('unavailable', 'bad');
  return circuit === 'half_open' ? badge('available (probing)', 'warn') : badge('available', 'ok');
}

function deleteVirtual(model, reload) {
  confirmAction({
    title: 'Delete this virtual model?',
    testId: 'confirm-dialog',
    message: [h('code', { text: model.name }), ' stops resolving at once; clients that use it get model_not_found.'],
    confirmLabel: 'Delete',
    async action() {
      await api('DELETE', '/admin/virtual-models', { name: model.name });
      notify('Virtual model deleted.');
      await reload();
    },
  });
}

function instanceTables(rows) {
  if (rows.length === 0)
    return empty('No provider instance lists models. Configure providers in config.yaml or with <TYPE>_API_KEY variables.');
  const byInstance = new Map();
  for (const row of rows) {
    if (!byInstance.has(row.instance)) byInstance.set(row.instance, []);
    byInstance.get(row.instance).push(row);
  }
  return [...byInstance].map(([instance, models]) => {
    const first = models[0];
    return h(
      'div',
      { class: 'instance', dataset: { instance } },
      h(
        'h3',
        {},
        h('code', { text: instance }),
        badge(first.provider_type, 'scope'),
        circuitBadge(first.circuit),
        badge(`listing ${first.listing}`, 'muted'),
      ),
      table(
        ['Model', 'Input / Mtok', 'Output / Mtok', 'Cached input / Mtok', 'Available'],
        models.map((row) =>
          h(
            'tr',
            { dataset: { model: row.id } },
            h('td', {}, h('code', { text: row.model })),
            h('td', { class: 'number', text: dollars(row.pricing?.input_per_mtok) }),
            h('td', { class: 'number', text: dollars(row.pricing?.output_per_mtok) }),
            h('td', { class: 'number', text: dollars(row.pricing?.cached_input_per_mtok) }),
            h('td', {}, availability(row.available, row.circuit)),
          ),
        ),
        { label: `Models of ${instance}` },
      ),
    );
  });
}
