// Rate limits: every rule with its live usage (refreshed every few seconds), create, edit the
// caps (counters kept), move (counters restart), delete, reset one, reset all.

import { api } from '../lib/api.js';
import { badge, empty, h, meter, patch, replace, table } from '../lib/dom.js';
import { count, period, relative } from '../lib/format.js';
import { every, liveStatus, unreachable } from '../lib/live.js';
import { confirmAction, failure, formDialog, notify, pageHeader } from '../lib/ui.js';
import { ruleFields, ruleIdentity } from './rule-form.js';

const refreshMilliseconds = 3000;

export function rateLimitsPage(main) {
  const state = { rules: [], serverTime: null, loaded: false };
  const holder = h('div', { class: 'card', dataset: { testid: 'rules' } });
  const status = liveStatus();
  const newButton = h('button', {
    'data-write': true,
    type: 'button',
    class: 'primary',
    text: 'New rule',
    onclick: () => createRule(state, show),
  });
  const resetAllButton = h('button', {
    'data-write': true,
    type: 'button',
    class: 'danger-outline',
    text: 'Reset all counters',
    onclick: () => resetAll(show),
  });
  replace(
    main,
    pageHeader(
      'Rate limits',
      'Caps on requests, tokens and in-flight requests per user path, provider or model. Counters live in memory.',
      status.element,
      newButton,
      resetAllButton,
    ),
    holder,
  );

  const show = (listing) => {
    state.rules = listing.rate_limits;
    state.serverTime = Date.parse(listing.server_time);
    state.loaded = true;
    // In place: a focused row button survives the refresh, and nothing is re-announced.
    patch(holder, rulesTable(state, show));
    status.ok();
    newButton.disabled = resetAllButton.disabled = false;
  };
  const refresh = async () => {
    let listing;
    try {
      listing = await api('GET', '/admin/rate-limits');
    } catch (error) {
      if (!unreachable(error)) status.ok();
      else status.failed();
      // A gateway that stopped answering: the last rules stay, marked stale by the status line.
      if (state.loaded && unreachable(error)) return;
      replace(holder, failure(error));
      state.loaded = false;
      newButton.disabled = resetAllButton.disabled = Boolean(error.featureOff);
      return;
    }
    show(listing);
  };
  return every(refreshMilliseconds, refresh);
}

/** The rule as last listed (row buttons look it up when clicked: rows are updated in place). */
const current = (state, rule) =>
  state.rules.find(
    (other) =>
      ruleIdentity(other.scope, other.subject, other.period_seconds) === ruleIdentity(rule.scope, rule.subject, rule.period_seconds),
  ) ?? rule;

function rulesTable(state, show) {
  if (state.rules.length === 0) return empty('No rules yet. Create one with “New rule”, or declare them in config.yaml (rate_limits).');
  return table(
    ['Rule', 'Period', 'Requests', 'Tokens', 'In flight', 'Window ends', 'Origin', ''],
    state.rules.map((rule) => ruleRow(rule, state, show)),
    { label: 'Rate-limit rules', class: 'rules' },
  );
}

function ruleRow(rule, state, show) {
  const concurrent = rule.period_seconds === 0;
  const readOnly = rule.origin === 'config';
  const windowEnd = rule.window_end ? relative(Date.parse(rule.window_end) - state.serverTime) : '—';
  return h(
    'tr',
    { dataset: { scope: rule.scope, subject: rule.subject, period: rule.period } },
    h('td', {}, h('div', { class: 'rule-subject' }, badge(rule.scope.replace('_', ' '), 'scope'), h('code', { text: rule.subject }))),
    h('td', { text: period(rule) }),
    h(
      'td',
      { class: 'usage', dataset: { cell: 'requests' } },
      usage(concurrent ? rule.in_flight : rule.requests_used, rule.max_requests, rule.requests_remaining, 'Requests used'),
    ),
    h(
      'td',
      { class: 'usage', dataset: { cell: 'tokens' } },
      concurrent ? '—' : usage(rule.tokens_used, rule.max_tokens, rule.tokens_remaining, 'Tokens used'),
    ),
    h('td', { class: 'number', dataset: { cell: 'in-flight' }, text: count(rule.in_flight) }),
    h('td', { title: rule.window_end ?? '', text: windowEnd }),
    h('td', {}, readOnly ? badge('config · read-only', 'muted') : badge('manual', 'ok')),
    h(
      'td',
      { class: 'row-actions' },
      readOnly
        ? null
        : h('button', {
            'data-write': true,
            type: 'button',
            class: 'small',
            text: 'Edit',
            onclick: () => editRule(current(state, rule), state, show),
          }),
      h('button', { 'data-write': true, type: 'button', class: 'small ghost', text: 'Reset', onclick: () => resetRule(rule, show) }),
      readOnly
        ? null
        : h('button', {
            'data-write': true,
            type: 'button',
            class: 'small danger-outline',
            text: 'Delete',
            onclick: () => deleteRule(rule, show),
          }),
    ),
  );
}

/** "3 / 10" with a bar (named `label`) and what is left; just the count when there is no cap. */
function usage(used, cap, remaining, label) {
  if (cap === null) return h('span', { class: 'muted' }, `${count(used)} · no cap`);
  return h(
    'div',
    { class: 'usage-cell' },
    h('span', { class: 'usage-numbers' }, h('strong', { dataset: { used: '' }, text: count(used) }), ` / ${count(cap)}`),
    meter(used, cap, label),
    h('small', { class: 'muted', text: `${count(remaining)} left` }),
  );
}

const describe = (rule) => `${rule.scope.replace('_', ' ')} ${rule.subject} · ${period(rule)}`;

function createRule(state, show) {
  const form = ruleFields(null);
  formDialog({
    title: 'New rate-limit rule',
    testId: 'rule-dialog',
    submitLabel: 'Create rule',
    build: () => form.fields,
    async submit() {
      const { body, periodSeconds } = form.read();
      const exists = state.rules.some(
        (rule) => ruleIdentity(rule.scope, rule.subject, rule.period_seconds) === ruleIdentity(body.scope, body.subject, periodSeconds),
      );
      if (exists) throw new Error('A rule for this scope, subject and period exists already: edit it instead.');
      show(await api('PUT', '/admin/rate-limits', body));
      notify('Rule created.');
    },
  });
}

function editRule(rule, state, show) {
  const moveNote = h('p', {
    class: 'banner banner-warn',
    hidden: true,
    text: 'This edit moves the rule to a new scope, subject or period: it is recreated there and its counters restart.',
  });
  const original = ruleIdentity(rule.scope, rule.subject, rule.period_seconds);
  const form = ruleFields(rule, () => {
    try {
      const { body, periodSeconds } = form.read();
      moveNote.hidden = ruleIdentity(body.scope, body.subject, periodSeconds) === original;
    } catch {
      moveNote.hidden = false;
    }
  });
  formDialog({
    title: `Edit ${describe(rule)}`,
    testId: 'rule-dialog',
    intro: 'Changing only the caps keeps the live counters.',
    build: () => [form.fields, moveNote],
    async submit() {
      const { body, periodSeconds } = form.read();
      const target = ruleIdentity(body.scope, body.subject, periodSeconds);
      if (target === original) {
        show(await api('PUT', '/admin/rate-limits', { ...body, scope: rule.scope, subject: rule.subject }));
        return notify('Caps saved; counters kept.');
      }
      if (state.rules.some((other) => ruleIdentity(other.scope, other.subject, other.period_seconds) === target)) {
        throw new Error('Another rule already has this scope, subject and period: edit or delete that one first.');
      }
      // A move: create the new key first, so a refused rule deletes nothing.
      await api('PUT', '/admin/rate-limits', body);
      show(await api('DELETE', '/admin/rate-limits', keyOf(rule)));
      notify('Rule moved; its counters restarted.');
    },
  });
}

const keyOf = (rule) => ({ scope: rule.scope, subject: rule.subject, limit_key: { period_seconds: rule.period_seconds } });

function deleteRule(rule, show) {
  confirmAction({
    title: 'Delete this rule?',
    testId: 'confirm-dialog',
    message: [h('code', { text: describe(rule) }), ' stops limiting at once and its counters are reset.'],
    confirmLabel: 'Delete rule',
    async action() {
      show(await api('DELETE', '/admin/rate-limits', keyOf(rule)));
      notify('Rule deleted.');
    },
  });
}

function resetRule(rule, show) {
  confirmAction({
    title: 'Reset this rule’s counters?',
    testId: 'confirm-dialog',
    message: [h('code', { text: describe(rule) }), ' starts counting from zero. In-flight requests are not affected.'],
    confirmLabel: 'Reset counters',
    async action() {
      show(
        await api('POST', '/admin/rate-limits/reset-one', {
          scope: rule.scope,
          subject: rule.subject,
          period: String(rule.period_seconds),
        }),
      );
      notify('Counters reset.');
    },
  });
}

function resetAll(show) {
  confirmAction({
    title: 'Reset every counter?',
    testId: 'confirm-dialog',
    message: 'All request and token windows of every rule start from zero. Rules are kept.',
    confirmLabel: 'Reset all',
    typed: 'reset',
    async action(confirmation) {
      await api('POST', '/admin/rate-limits/reset', { confirmation });
      show(await api('GET', '/admin/rate-limits'));
      notify('All counters reset.');
    },
  });
}
