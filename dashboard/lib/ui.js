// Shared pieces of the pages: error lines next to forms, dialogs and short notices.

import { h, replace } from './dom.js';

/** An error line for a form; `show(error)` writes the admin API's message into it. */
export function errorLine() {
  const element = h('p', { class: 'form-error', role: 'alert', hidden: true });
  return {
    element,
    show(error) {
      const message = error instanceof Error ? error.message : String(error);
      const param = error && error.param ? ` (${error.param})` : '';
      replace(element, h('strong', { text: 'Error: ' }), `${message}${param}`);
      element.hidden = false;
    },
    clear() {
      element.hidden = true;
      element.replaceChildren();
    },
  };
}

/**
 * A modal form. `build(form)` returns the fields; `submit(form)` runs on submit and may
 * throw an ApiError, shown inside the dialog; the dialog closes when it resolves. However it
 * closes (Cancel, Escape, a save), focus goes back to the control that opened it, or to the
 * page when that control is gone (a deleted row's button).
 */
export function formDialog({ title, intro, build, submit, submitLabel = 'Save', danger = false, testId }) {
  const opener = document.activeElement;
  const error = errorLine();
  const submitButton = h('button', { type: 'submit', class: danger ? 'danger' : 'primary', text: submitLabel });
  const form = h('form', { class: 'dialog-form', method: 'dialog', novalidate: true });
  const dialog = h('dialog', { class: 'dialog', 'aria-label': title, dataset: testId ? { testid: testId } : undefined });
  // Out of the page at once: its `close` event (focus back) comes a task later, and a refresh in
  // between must not see a dialog still open.
  const close = () => {
    dialog.close();
    dialog.remove();
  };
  const actions = h(
    'div',
    { class: 'actions' },
    h('button', { type: 'button', class: 'ghost', text: 'Cancel', onclick: close }),
    submitButton,
  );
  replace(
    form,
    h('h2', { text: title }),
    intro ? h('p', { class: 'dialog-intro' }, intro) : null,
    build(form, submitButton),
    error.element,
    actions,
  );
  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    error.clear();
    submitButton.disabled = true;
    try {
      await submit(form);
      close();
    } catch (failure) {
      error.show(failure);
    } finally {
      submitButton.disabled = false;
    }
  });
  // Escape fires `cancel` then `close`; Cancel and a save call close(): one way out for all.
  dialog.addEventListener('close', () => {
    dialog.remove();
    returnFocus(opener);
  });
  dialog.append(form);
  document.body.append(dialog);
  dialog.showModal();
  return dialog;
}

/** Focus back on `opener` when it is still in the page, else on the page's main region. */
export function returnFocus(opener) {
  const target =
    opener instanceof window.HTMLElement && opener !== document.body && opener.isConnected ? opener : document.getElementById('content');
  target?.focus();
}

/**
 * Asks before something destructive. With `typed`, the button stays disabled until the user
 * types that exact word.
 */
export function confirmAction({ title, message, confirmLabel, typed, action, testId }) {
  return formDialog({
    title,
    intro: message,
    submitLabel: confirmLabel,
    danger: true,
    testId,
    build(_form, submitButton) {
      if (!typed) return null;
      const input = h('input', { name: 'confirmation', autocomplete: 'off', spellcheck: 'false', 'aria-label': `Type ${typed}` });
      submitButton.disabled = true;
      input.addEventListener('input', () => {
        submitButton.disabled = input.value !== typed;
      });
      return h('label', { class: 'field' }, h('span', { class: 'field-label' }, 'Type ', h('code', { text: typed }), ' to confirm'), input);
    },
    submit: (form) => action(form.elements.namedItem('confirmation')?.value),
  });
}

/**
 * The region short-lived notices go to: a band under the navigation in the sticky page header
 * (so a notice never lies over the page's buttons), or one of its own outside the shell.
 */
export function noticeRegion() {
  return h('div', { class: 'notices', id: 'notices', role: 'status', 'aria-live': 'polite' });
}

/** A short-lived notice ("Rule saved: counters kept"), shown for 5 seconds. */
export function notify(text) {
  let region = document.getElementById('notices');
  if (region === null) {
    region = noticeRegion();
    document.body.append(region);
  }
  const note = h('div', { class: 'notice', text });
  region.append(note);
  setTimeout(() => note.remove(), 5000);
}

/** The header of a page: a title, a line of explanation and the page's buttons. */
export function pageHeader(title, explanation, ...buttons) {
  return h(
    'header',
    { class: 'page-header' },
    h('div', {}, h('h1', { text: title }), explanation ? h('p', { class: 'muted' }, explanation) : null),
    h('div', { class: 'actions' }, buttons),
  );
}

/** A section with a heading (and optional buttons) on a page. */
export function section(title, buttons, ...content) {
  return h(
    'section',
    { class: 'card' },
    h('div', { class: 'card-header' }, h('h2', { text: title }), h('div', { class: 'actions' }, buttons ?? [])),
    content,
  );
}

/** The message shown in place of a page whose feature is off or whose data failed to load. */
export function failure(error) {
  const tone = error && error.featureOff ? 'off' : 'error';
  return h('div', { class: ['banner', `banner-${tone}`], role: 'alert' }, error instanceof Error ? error.message : String(error));
}
