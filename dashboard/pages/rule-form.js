// The fields of a rate-limit rule (create and edit dialogs) and the identity of a rule.

import { field, h } from '../lib/dom.js';

const subjectHints = {
  user_path: ['/team/app', 'A user path: covers the path and everything below it.'],
  provider: ['openai', 'A provider instance name.'],
  model: ['openai/gpt-4o-mini', 'A model id: <instance>/<model>, or a bare model on any instance.'],
};

const namedPeriods = { minute: 60, hour: 3600, day: 86400, concurrent: 0 };

/**
 * A rule's identity as the gateway keys it: scope, normalised subject (case-insensitive) and
 * period in seconds. Used to tell an edit of the caps from a move.
 */
export function ruleIdentity(scope, subject, periodSeconds) {
  const trimmed = String(subject).trim();
  const normalized = scope === 'user_path' ? `/${trimmed.split('/').filter(Boolean).join('/')}` : trimmed;
  return `${scope}|${normalized.toLowerCase()}|${periodSeconds}`;
}

/** The period choice of a rule: a named period, or `custom` with its seconds. */
function periodChoice(rule) {
  if (!rule) return { choice: 'minute', seconds: '' };
  const named = Object.entries(namedPeriods).find(([, seconds]) => seconds === rule.period_seconds);
  return named ? { choice: named[0], seconds: '' } : { choice: 'custom', seconds: String(rule.period_seconds) };
}

/**
 * Builds the fields, pre-filled from `rule` when editing. `onKeyChange` runs when scope,
 * subject or period change (the edit dialog says whether the edit is a move).
 */
export function ruleFields(rule, onKeyChange = () => {}) {
  const scope = h(
    'select',
    { name: 'scope' },
    ['user_path', 'provider', 'model'].map((value) =>
      h('option', { value, selected: rule?.scope === value, text: value.replace('_', ' ') }),
    ),
  );
  const subject = h('input', { name: 'subject', required: true, autocomplete: 'off', spellcheck: 'false', value: rule?.subject ?? '' });
  const { choice, seconds } = periodChoice(rule);
  const period = h(
    'select',
    { name: 'period' },
    [...Object.keys(namedPeriods), 'custom'].map((value) =>
      h('option', { value, selected: value === choice, text: value === 'custom' ? 'custom (seconds)' : value }),
    ),
  );
  const periodSeconds = h('input', { name: 'period_seconds', type: 'number', min: '1', step: '1', inputmode: 'numeric', value: seconds });
  const maxRequests = capInput('max_requests', rule?.max_requests);
  const maxTokens = capInput('max_tokens', rule?.max_tokens);
  const secondsField = field('Window (seconds)', periodSeconds);
  const tokensField = field('Max tokens', maxTokens, 'Tokens counted after each response; needs usage tracking.');
  const subjectHint = h('small');
  const requestsLabel = h('span', { class: 'field-label' });
  const sync = () => {
    const [placeholder, hint] = subjectHints[scope.value];
    subject.placeholder = placeholder;
    subjectHint.textContent = hint;
    secondsField.hidden = period.value !== 'custom';
    tokensField.hidden = period.value === 'concurrent';
    requestsLabel.textContent = period.value === 'concurrent' ? 'Max in flight' : 'Max requests';
  };
  for (const control of [scope, subject, period, periodSeconds]) {
    control.addEventListener('input', () => {
      sync();
      onKeyChange();
    });
  }
  sync();
  const fields = h(
    'div',
    { class: 'form-grid' },
    field('Scope', scope),
    h('label', { class: 'field' }, h('span', { class: 'field-label', text: 'Subject' }), subject, subjectHint),
    field('Period', period),
    secondsField,
    h('label', { class: 'field' }, requestsLabel, maxRequests),
    tokensField,
  );
  return { fields, read: () => readRule({ scope, subject, period, periodSeconds, maxRequests, maxTokens }) };
}

function capInput(name, value) {
  return h('input', { name, type: 'number', min: '1', step: '1', inputmode: 'numeric', value: value ?? '', placeholder: 'no cap' });
}

/** The PUT body of the form, plus the period in seconds (for the identity). */
function readRule({ scope, subject, period, periodSeconds, maxRequests, maxTokens }) {
  const custom = period.value === 'custom';
  const seconds = custom ? Number(periodSeconds.value) : namedPeriods[period.value];
  if (custom && !(Number.isInteger(seconds) && seconds > 0)) throw new Error('Give the custom window as a whole number of seconds.');
  const cap = (input) => (input.value.trim() === '' || input.closest('[hidden]') ? null : Number(input.value));
  return {
    body: {
      scope: scope.value,
      subject: subject.value.trim(),
      limit_key: custom ? { period_seconds: seconds } : { period: period.value },
      max_requests: cap(maxRequests),
      max_tokens: cap(maxTokens),
    },
    periodSeconds: seconds,
  };
}
