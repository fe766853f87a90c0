// The dashboard's entry point: sign-in with the master key (or an admin/viewer API key), the page shell and hash routing.

import { api, forgetKey, onUnauthorized, storedKey, storeKey } from './lib/api.js';
import { h, replace } from './lib/dom.js';
import { errorLine, noticeRegion } from './lib/ui.js';
import { apiKeysPage } from './pages/api-keys.js';
import { auditPage } from './pages/audit.js';
import { mcpPage } from './pages/mcp.js';
import { modelsPage } from './pages/models.js';
import { rateLimitsPage } from './pages/rate-limits.js';
import { requestsPage } from './pages/requests.js';
import { usagePage } from './pages/usage.js';

/** Every page: its hash, its name in the navigation and how it mounts (returns a cleanup). */
const pages = [
  { hash: 'rate-limits', title: 'Rate limits', mount: rateLimitsPage },
  { hash: 'models', title: 'Models', mount: modelsPage },
  { hash: 'mcp', title: 'MCP', mount: mcpPage },
  { hash: 'usage', title: 'Usage & budgets', mount: usagePage },
  { hash: 'requests', title: 'Requests', mount: requestsPage },
  { hash: 'api-keys', title: 'API keys', mount: apiKeysPage },
  { hash: 'audit', title: 'Audit', mount: auditPage },
];

/** Answers the sign-in probe with the credential's role (401 for a wrong key, 403 for a user key). */
const probePath = '/admin/whoami';

const root = document.getElementById('app');
let unmount = () => {};

async function start() {
  onUnauthorized((error) => {
    forgetKey();
    showSignIn(`Signed out: ${error.message}`);
  });
  const key = storedKey();
  if (key !== null) {
    try {
      const whoami = await api('GET', probePath, undefined, { key, quiet: true });
      return showShell(whoami.role);
    } catch (error) {
      forgetKey();
      return showSignIn(error.status === 401 ? `Signed out: ${error.message}` : error.message);
    }
  }
  return showSignIn();
}

/**
 * Whether the admin API answers without a key (no MASTER_KEY configured), from the dashboard's
 * own session.json: probing /admin without a key would log a 401 on every sign-in page load.
 */
async function adminIsOpen() {
  try {
    const response = await fetch('/dashboard/session.json', { cache: 'no-store', credentials: 'omit' });
    return response.ok && (await response.json()).admin_open === true;
  } catch {
    return false;
  }
}

/** `message`: an error to show (a refused key), or `{ info }` for a plain notice (signed out). */
async function showSignIn(message) {
  unmount();
  unmount = () => {};
  const error = errorLine();
  const input = h('input', {
    id: 'master-key',
    name: 'master-key',
    type: 'password',
    autocomplete: 'current-password',
    spellcheck: 'false',
    placeholder: 'MASTER_KEY or an admin/viewer key',
  });
  const openNote = h('p', { class: 'banner banner-off', hidden: true });
  const info = h('p', { class: 'banner banner-info', role: 'status', dataset: { testid: 'signed-out' } });
  const form = h(
    'form',
    { class: 'sign-in card', 'aria-labelledby': 'sign-in-title', onsubmit: (event) => signIn(event, input, error) },
    h(
      'div',
      { class: 'brand' },
      h('img', { src: '/dashboard/favicon.svg', alt: '', width: 32, height: 32 }),
      h('span', { text: 'Model Gateway' }),
    ),
    h('h1', { id: 'sign-in-title', text: 'Sign in' }),
    h('p', {
      class: 'muted',
      text: 'Enter the gateway’s master key, or an API key with the admin or viewer role (read-only). It is kept in this tab only and sent as a bearer token.',
    }),
    info,
    openNote,
    h('label', { class: 'field', for: 'master-key' }, h('span', { class: 'field-label', text: 'Master key or admin API key' }), input),
    error.element,
    h('button', { type: 'submit', class: 'primary wide', text: 'Sign in' }),
  );
  replace(root, h('main', { class: 'sign-in-page' }, form));
  if (typeof message === 'string') error.show(message);
  info.textContent = message?.info ?? '';
  info.hidden = !message?.info;
  input.focus();
  if (await adminIsOpen()) {
    openNote.textContent =
      'This gateway has no MASTER_KEY: its admin API is open to anyone who can reach it. Leave the key empty to continue.';
    openNote.hidden = false;
    input.placeholder = 'no key needed';
  }
}

async function signIn(event, input, error) {
  event.preventDefault();
  error.clear();
  const key = input.value.trim();
  let whoami;
  try {
    whoami = await api('GET', probePath, undefined, { key, quiet: true });
  } catch (failure) {
    const reason =
      failure.status === 401
        ? key === ''
          ? 'A master key is required: this gateway has MASTER_KEY set.'
          : `The gateway refused this key: ${failure.message}`
        : failure.status === 403
          ? `This key may not use the dashboard: it needs the master key or a key with the admin or viewer role. (${failure.message})`
          : failure.message;
    error.show(reason);
    input.select();
    return;
  }
  storeKey(key);
  if (!location.hash) history.replaceState(null, '', '#/rate-limits');
  showShell(whoami.role);
}

function signOut() {
  forgetKey();
  showSignIn({ info: 'You are signed out. Sign in again to continue.' });
}

/** `role`: `admin` shows everything; `viewer` hides every write control (marked `data-write`). */
function showShell(role) {
  const readOnly = role !== 'admin';
  const navigation = h(
    'nav',
    { class: 'nav', 'aria-label': 'Pages' },
    pages.map((page) => h('a', { href: `#/${page.hash}`, dataset: { page: page.hash }, text: page.title })),
  );
  const main = h('main', { class: 'content', id: 'content', tabindex: '-1' });
  const header = h(
    'header',
    { class: 'topbar' },
    h(
      'a',
      { class: 'brand', href: '#/rate-limits' },
      h('img', { src: '/dashboard/favicon.svg', alt: '', width: 24, height: 24 }),
      'Model Gateway',
    ),
    navigation,
    readOnly ? h('span', { class: 'badge role-badge', title: 'This key has the viewer role', text: 'Read-only' }) : null,
    h('button', { type: 'button', class: 'ghost sign-out', text: 'Sign out', onclick: signOut }),
  );
  // The header and the notices band under it stay at the top (notices never cover the page).
  const top = h('div', { class: 'top' }, header, noticeRegion());
  replace(root, h('div', { class: readOnly ? 'shell read-only' : 'shell', dataset: { role } }, top, main));
  route();
}

function route() {
  const main = document.getElementById('content');
  if (!main) return;
  const hash = location.hash.replace(/^#\/?/, '').split('?')[0];
  const page = pages.find((candidate) => candidate.hash === hash) ?? pages[0];
  for (const link of document.querySelectorAll('.nav a')) {
    if (link.dataset.page === page.hash) {
      link.setAttribute('aria-current', 'page');
    } else link.removeAttribute('aria-current');
  }
  unmount();
  main.replaceChildren();
  document.title = `${page.title} · Model Gateway`;
  unmount = page.mount(main) ?? (() => {});
}

window.addEventListener('hashchange', route);
start();
