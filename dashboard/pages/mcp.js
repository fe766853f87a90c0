// MCP: upstream MCP servers (status, tool counts) and virtual MCP servers (members, missing
// members, conflicts, tool discovery); create, edit, delete the admin-managed ones.

import { api } from '../lib/api.js';
import { badge, empty, h, patch, replace, table } from '../lib/dom.js';
import { count } from '../lib/format.js';
import { confirmAction, failure, notify, pageHeader, section } from '../lib/ui.js';
import { serverDialog, virtualServerDialog } from './mcp-forms.js';

const refreshMilliseconds = 5000;

export function mcpPage(main) {
  const state = { servers: [], virtuals: [] };
  const serversHolder = h('div', { dataset: { testid: 'mcp-servers' } });
  const virtualHolder = h('div', { dataset: { testid: 'mcp-virtual-servers' } });
  const buttons = {
    server: h('button', {
      'data-write': true,
      type: 'button',
      class: 'primary',
      text: 'Add server',
      onclick: () => serverDialog(null, load),
    }),
    virtual: h('button', {
      'data-write': true,
      type: 'button',
      class: 'primary',
      text: 'New virtual server',
      onclick: () => virtualServerDialog(null, state.servers, load),
    }),
  };
  async function load() {
    try {
      const [servers, virtuals] = await Promise.all([api('GET', '/admin/mcp-servers'), api('GET', '/admin/mcp-virtual-servers')]);
      Object.assign(state, { servers, virtuals });
      // In place: a focused row button survives the refresh.
      patch(serversHolder, serversTable(state, load));
      patch(virtualHolder, virtualTable(state, load));
      buttons.server.disabled = buttons.virtual.disabled = false;
    } catch (error) {
      replace(virtualHolder, failure(error));
      serversHolder.replaceChildren();
      buttons.server.disabled = buttons.virtual.disabled = Boolean(error.featureOff);
    }
  }
  replace(
    main,
    pageHeader('MCP', 'Upstream MCP servers, each served at /mcp/{slug}, and virtual servers that serve several of them at /mcp/{name}.'),
    section('Virtual servers', [buttons.virtual], virtualHolder),
    section('Servers', [buttons.server], serversHolder),
  );
  load();
  // Connection status and tool counts change as servers connect.
  const timer = setInterval(() => {
    if (!document.hidden && !document.querySelector('dialog[open]')) load();
  }, refreshMilliseconds);
  return () => clearInterval(timer);
}

const statusTones = { connected: 'ok', connecting: 'warn', error: 'bad' };

function serversTable(state, reload) {
  const { servers } = state;
  if (servers.length === 0) return empty('No MCP servers. Add one, or declare them in config.yaml (mcp.servers).');
  return table(
    ['Server', 'Transport', 'Endpoint', 'Status', 'Tools', 'Prompts', 'Resources', 'Origin', ''],
    servers.map((server) =>
      h(
        'tr',
        { dataset: { slug: server.slug } },
        h(
          'td',
          {},
          h('code', { text: server.slug }),
          server.description ? h('div', { class: 'muted small', text: server.description }) : null,
        ),
        h('td', {}, badge(server.transport, 'scope')),
        h('td', {}, h('code', { class: 'small', text: server.url ?? [server.command, ...server.args].join(' ') })),
        h(
          'td',
          {},
          badge(server.status, statusTones[server.status] ?? 'muted'),
          server.last_error ? h('div', { class: 'muted small', text: server.last_error }) : null,
        ),
        h('td', { class: 'number', dataset: { cell: 'tools' }, text: count(server.tool_count) }),
        h('td', { class: 'number', text: count(server.prompt_count) }),
        h('td', { class: 'number', text: count(server.resource_count) }),
        h('td', {}, server.managed ? badge('manual', 'ok') : badge('config · read-only', 'muted')),
        h(
          'td',
          { class: 'row-actions' },
          server.managed
            ? [
                h('button', {
                  'data-write': true,
                  type: 'button',
                  class: 'small',
                  text: 'Edit',
                  // Rows are updated in place: the server as last listed.
                  onclick: () => serverDialog(state.servers.find((other) => other.slug === server.slug) ?? server, reload),
                }),
                h('button', {
                  'data-write': true,
                  type: 'button',
                  class: 'small danger-outline',
                  text: 'Delete',
                  onclick: () => remove('server', server.slug, reload),
                }),
              ]
            : null,
        ),
      ),
    ),
    { label: 'MCP servers' },
  );
}

function virtualTable(state, reload) {
  if (state.virtuals.length === 0) return empty('No virtual servers. Create one to serve several MCP servers at one address.');
  return table(
    ['Virtual server', 'Members', 'Tool discovery', 'Status', 'Origin', ''],
    state.virtuals.map((virtual) =>
      h(
        'tr',
        { dataset: { name: virtual.name } },
        h(
          'td',
          {},
          h('code', { text: virtual.name }),
          h('div', { class: 'muted small', text: `/mcp/${virtual.name}` }),
          virtual.description ? h('div', { class: 'small', text: virtual.description }) : null,
        ),
        h('td', { dataset: { cell: 'members' } }, members(virtual)),
        h(
          'td',
          { dataset: { cell: 'tool-discovery' } },
          badge(virtual.tool_discovery, virtual.tool_discovery === 'search' ? 'scope' : 'muted'),
          virtual.configured_tool_discovery === '' ? h('span', { class: 'muted small', text: ' gateway default' }) : null,
        ),
        h(
          'td',
          { dataset: { cell: 'status' } },
          virtual.conflict
            ? [badge('not served', 'bad'), h('div', { class: 'muted small', text: virtual.conflict })]
            : badge('served', 'ok'),
        ),
        h('td', {}, virtual.managed ? badge('manual', 'ok') : badge('config · read-only', 'muted')),
        h(
          'td',
          { class: 'row-actions' },
          virtual.managed
            ? [
                h('button', {
                  'data-write': true,
                  type: 'button',
                  class: 'small',
                  text: 'Edit',
                  onclick: () =>
                    virtualServerDialog(state.virtuals.find((other) => other.name === virtual.name) ?? virtual, state.servers, reload),
                }),
                h('button', {
                  'data-write': true,
                  type: 'button',
                  class: 'small danger-outline',
                  text: 'Delete',
                  onclick: () => remove('virtual', virtual.name, reload),
                }),
              ]
            : null,
        ),
      ),
    ),
    { label: 'Virtual MCP servers' },
  );
}

/** Members as tags; those no server matches are marked missing. */
function members(virtual) {
  const missing = new Set(virtual.missing_servers);
  return h(
    'div',
    { class: 'tags' },
    virtual.servers.map((slug) =>
      missing.has(slug) ? badge(`${slug} · missing`, 'bad') : h('code', { class: 'tag', dataset: { member: slug }, text: slug }),
    ),
  );
}

function remove(kind, name, reload) {
  const virtual = kind === 'virtual';
  confirmAction({
    title: virtual ? 'Delete this virtual server?' : 'Delete this MCP server?',
    testId: 'confirm-dialog',
    message: [
      h('code', { text: name }),
      virtual ? ` is no longer served at /mcp/${name}.` : ' is disconnected; virtual servers that list it report it missing.',
    ],
    confirmLabel: 'Delete',
    async action() {
      await api('DELETE', `/admin/${virtual ? 'mcp-virtual-servers' : 'mcp-servers'}/${encodeURIComponent(name)}`);
      notify(virtual ? 'Virtual server deleted.' : 'Server deleted.');
      await reload();
    },
  });
}
