// Budgets: dollar caps per user path and period, with spent and remaining; create, change
// the amount (the period's spend is kept) and delete manual ones.

import { api } from '../lib/api.js';
import { badge, empty, field, h, meter, replace, table } from '../lib/dom.js';
import { dollars, when } from '../lib/format.js';
import { confirmAction, failure, formDialog, notify, section } from '../lib/ui.js';

const periods = ['hourly', 'daily', 'weekly', 'monthly'];

export function budgetsSection() {
  const holder = h('div', { dataset: { testid: 'budgets' } });
  const load = async () => {
    try {
      replace(holder, budgetsTable((await api('GET', '/admin/budgets')).budgets, load));
      newButton.disabled = false;
    } catch (error) {
      replace(holder, failure(error));
      newButton.disabled = Boolean(error.featureOff);
    }
  };
  const newButton = h('button', {
    'data-write': true,
    type: 'button',
    class: 'primary',
    text: 'New budget',
    onclick: () => budgetDialog(null, load),
  });
  load();
  return section('Budgets', [newButton], holder);
}

function budgetsTable(budgets, reload) {
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
          h('div', { class: 'usage-cell' }, h('strong', { text: dollars(budget.spent) }), meter(budget.spent, budget.amount)),
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
                  onclick: () => budgetDialog(budget, reload),
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
