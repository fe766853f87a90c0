// Budgets: dollar caps per user path and period, with spent and remaining; create, change
// the amount (the period's spend is kept) and delete manual ones.

import { api } from '../lib/api.js';
import { badge, empty, field, h, meter, patch, replace, table } from '../lib/dom.js';
import { dollars, when } from '../lib/format.js';
import { unreachable } from '../lib/live.js';
import { confirmAction, failure, formDialog, notify, section } from '../lib/ui.js';

const periods = ['hourly', 'daily', 'weekly', 'monthly'];

/**
 * The budgets card: `{ element, load }`. `load()` (re)reads the budgets, updating the table in
 * place, and resolves with whether the gateway answered; after a failure the last table stays.
 */
export function budgetsSection() {
  const holder = h('div', { dataset: { testid: 'budgets' } });
  const shown = { budgets: [], loaded: false };
  const load = async () => {
    let listing;
    try {
      listing = await api('GET', '/admin/budgets');
    } catch (error) {
      if (unreachable(error) && shown.loaded) return false;
      replace(holder, failure(error));
      shown.loaded = false;
      newButton.disabled = Boolean(error.featureOff);
      return !unreachable(error);
    }
    shown.budgets = listing.budgets;
    shown.loaded = true;
    patch(holder, budgetsTable(shown, load));
    newButton.disabled = false;
    return true;
  };
  const newButton = h('button', {
    'data-write': true,
    type: 'button',
    class: 'primary',
    text: 'New budget',
    onclick: () => budgetDialog(null, load),
  });
  return { element: section('Budgets', [newButton], holder), load };
}

/** The budget as last listed (row buttons look it up when clicked: rows are updated in place). */
const current = (shown, budget) =>
  shown.budgets.find((other) => other.user_path === budget.user_path && other.period === budget.period) ?? budget;

function budgetsTable(shown, reload) {
  const { budgets } = shown;
  if (budgets.length === 0)
    return empty('No budgets. A budget caps the dollars a user path (and everything below it) may spend per period.');
  return table(
    ['User path', 'Period', 'Spent', 'Remaining', 'Amount', 'Period ends', 'Origin', ''],
    budgets.map((budget) => {
      const readOnly = budget.origin === 'config';
      return h(
        'tr',
        { dataset: { userPath: budget.user_path, period: budget.period } },
        h('td', {}, h('code', { text: budget.user_path })),
        h('td', { text: budget.period }),
        h(
          'td',
          { class: 'usage' },
          h(
            'div',
            { class: 'usage-cell' },
            h('strong', { text: dollars(budget.spent) }),
            meter(budget.spent, budget.amount, 'Budget spent'),
          ),
        ),
        h('td', { class: 'number', text: dollars(budget.remaining) }),
        h('td', { class: 'number', text: dollars(budget.amount) }),
        h('td', { text: when(budget.period_end) }),
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
                  onclick: () => budgetDialog(current(shown, budget), reload),
                }),
                h('button', {
                  'data-write': true,
                  type: 'button',
                  class: 'small danger-outline',
                  text: 'Delete',
                  onclick: () => deleteBudget(budget, reload),
                }),
              ],
        ),
      );
    }),
    { label: 'Budgets' },
  );
}

/** The PUT/DELETE key of a budget: its path and period (named, or seconds). */
const keyOf = (budget) =>
  periods.includes(budget.period)
    ? { user_path: budget.user_path, period: budget.period }
    : { user_path: budget.user_path, period_seconds: budget.period_seconds };

function budgetDialog(budget, reload) {
  const userPath = h('input', {
    name: 'user_path',
    required: true,
    autocomplete: 'off',
    value: budget?.user_path ?? '',
    readonly: Boolean(budget),
    placeholder: '/team',
  });
  const period = h(
    'select',
    { name: 'period', disabled: Boolean(budget) },
    periods.map((value) => h('option', { value, selected: (budget?.period ?? 'monthly') === value, text: value })),
  );
  const amount = h('input', {
    name: 'amount',
    type: 'number',
    min: '0.01',
    step: '0.01',
    required: true,
    value: budget?.amount ?? '',
    placeholder: '100',
  });
  formDialog({
    title: budget ? `Edit the ${budget.period} budget of ${budget.user_path}` : 'New budget',
    testId: 'budget-dialog',
    intro: budget
      ? 'Changing the amount keeps what this period has spent.'
      : 'Requests under this path get 429 budget_exceeded once the amount is spent.',
    build: () =>
      h(
        'div',
        { class: 'form-grid' },
        field('User path', userPath),
        budget ? null : field('Period', period),
        field('Amount (USD)', amount),
      ),
    async submit() {
      const key = budget ? keyOf(budget) : { user_path: userPath.value.trim(), period: period.value };
      await api('PUT', '/admin/budgets', { ...key, amount: Number(amount.value) });
      notify('Budget saved.');
      await reload();
    },
  });
}

function deleteBudget(budget, reload) {
  confirmAction({
    title: 'Delete this budget?',
    testId: 'confirm-dialog',
    message: [h('code', { text: `${budget.user_path} · ${budget.period}` }), ' stops capping spend at once.'],
    confirmLabel: 'Delete budget',
    async action() {
      await api('DELETE', '/admin/budgets', keyOf(budget));
      notify('Budget deleted.');
      await reload();
    },
  });
}
