// The create/edit dialog of a virtual model: name, description, strategy and its targets.

import { api } from '../lib/api.js';
import { field, h } from '../lib/dom.js';
import { formDialog, notify } from '../lib/ui.js';

const strategies = [
  ['failover', 'failover: targets in order, the next on failure'],
  ['round_robin', 'round robin: spread by weight'],
  ['least_busy', 'least busy: fewest requests in flight'],
];

/** Opens the dialog; `model` is null to create. `catalog`: instance -> model ids. */
export function virtualModelDialog(model, catalog, reload) {
  const name = h('input', {
    name: 'name',
    required: true,
    autocomplete: 'off',
    spellcheck: 'false',
    value: model?.name ?? '',
    readonly: Boolean(model),
  });
  const description = h('input', { name: 'description', autocomplete: 'off', value: model?.description ?? '' });
  const strategy = h(
    'select',
    { name: 'strategy' },
    strategies.map(([value, label]) => h('option', { value, selected: (model?.strategy ?? 'failover') === value, text: label })),
  );
  const list = h('ol', { class: 'target-editor' });
  const modelIds = h(
    'datalist',
    { id: 'known-models' },
    [...catalog].flatMap(([instance, ids]) => ids.map((id) => h('option', { value: id, label: instance }))),
  );
  const addTarget = (target) => list.append(targetRow(target, [...catalog.keys()], list));
  for (const target of model?.targets ?? [{ provider: null, model: '', weight: 1 }]) addTarget(target);
  formDialog({
    title: model ? `Edit ${model.name}` : 'New virtual model',
    testId: 'virtual-model-dialog',
    intro: model ? 'The name is the model clients ask for; to rename, create a new one.' : 'Clients ask for this name as their model.',
    submitLabel: model ? 'Save' : 'Create',
    build: () => [
      h('div', { class: 'form-grid' }, field('Name', name), field('Strategy', strategy)),
      field('Description', description),
      h('div', { class: 'field' }, h('span', { class: 'field-label', text: 'Targets' }), list, modelIds),
      h('button', {
        type: 'button',
        class: 'small ghost add-target',
        text: 'Add target',
        onclick: () => addTarget({ provider: null, model: '', weight: 1 }),
      }),
    ],
    async submit() {
      const targets = [...list.children].map((row) => row.read());
      await api('PUT', '/admin/virtual-models', {
        name: name.value.trim(),
        description: description.value.trim(),
        strategy: strategy.value,
        targets,
      });
      notify(model ? 'Virtual model saved.' : 'Virtual model created.');
      await reload();
    },
  });
}

/** One target: instance (or any), model id, weight, and a remove button. */
function targetRow(target, instances, list) {
  const provider = h(
    'select',
    { 'aria-label': 'Provider instance' },
    h('option', { value: '', text: 'any instance' }),
    [...new Set([...instances, ...(target.provider ? [target.provider] : [])])].map((instance) =>
      h('option', { value: instance, selected: instance === target.provider, text: instance }),
    ),
  );
  const model = h('input', {
    'aria-label': 'Model',
    list: 'known-models',
    placeholder: 'model id',
    autocomplete: 'off',
    spellcheck: 'false',
    value: target.model,
  });
  const weight = h('input', { 'aria-label': 'Weight', type: 'number', min: '1', step: '1', value: target.weight ?? 1, class: 'weight' });
  const row = h(
    'li',
    { class: 'target-row' },
    provider,
    model,
    weight,
    h('button', {
      type: 'button',
      class: 'small ghost',
      'aria-label': 'Remove target',
      text: '✕',
      onclick: () => {
        if (list.children.length > 1) row.remove();
      },
    }),
  );
  row.read = () => ({
    ...(provider.value ? { provider: provider.value } : {}),
    model: model.value.trim(),
    weight: Number(weight.value || 1),
  });
  return row;
}
