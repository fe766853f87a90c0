// The dialogs of the MCP page: an upstream server (http or sse) and a virtual server.

import { api } from '../lib/api.js';
import { field, h } from '../lib/dom.js';
import { formDialog, notify } from '../lib/ui.js';

/** `Name: value` lines; stored values come back as `***` and are kept when sent unchanged. */
function headersText(headers) {
  return Object.entries(headers ?? {})
    .map(([name, value]) => `${name}: ${value}`)
    .join('\n');
}

function parseHeaders(text) {
  const headers = {};
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const colon = line.indexOf(':');
    if (colon <= 0) throw new Error(`Write each header as "Name: value" (got "${line.trim()}").`);
    headers[line.slice(0, colon).trim()] = line.slice(colon + 1).trim();
  }
  return headers;
}

/** Adds or edits an upstream server; `server` is null to add one. */
export function serverDialog(server, reload) {
  const slug = h('input', {
    name: 'slug',
    required: true,
    autocomplete: 'off',
    spellcheck: 'false',
    value: server?.slug ?? '',
    readonly: Boolean(server),
    placeholder: 'docs',
  });
  const description = h('input', { name: 'description', autocomplete: 'off', value: server?.description ?? '' });
  const transport = h(
    'select',
    { name: 'transport' },
    [
      ['http', 'Streamable HTTP'],
      ['sse', 'HTTP + SSE (legacy)'],
    ].map(([value, label]) => h('option', { value, selected: (server?.transport ?? 'http') === value, text: label })),
  );
  const url = h('input', {
    name: 'url',
    type: 'url',
    required: true,
    autocomplete: 'off',
    spellcheck: 'false',
    value: server?.url ?? '',
    placeholder: 'https://mcp.example.com/mcp',
  });
  const headers = h('textarea', { name: 'headers', rows: '3', spellcheck: 'false', placeholder: 'Authorization: Bearer …' });
  headers.value = headersText(server?.headers);
  formDialog({
    title: server ? `Edit ${server.slug}` : 'Add an MCP server',
    testId: 'mcp-server-dialog',
    intro: server
      ? 'Header values show as *** and are kept unless you replace them.'
      : 'Served at /mcp/{slug} under its own tool names. stdio servers are declared in config.yaml.',
    submitLabel: server ? 'Save' : 'Add server',
    build: () => [
      h('div', { class: 'form-grid' }, field('Slug', slug), field('Transport', transport)),
      field('URL', url),
      field('Description', description),
      field('Headers', headers, 'One per line, sent with every request to this server (e.g. its own credentials).'),
    ],
    async submit() {
      const body = {
        slug: slug.value.trim(),
        description: description.value.trim(),
        transport: transport.value,
        url: url.value.trim(),
        headers: parseHeaders(headers.value),
      };
      await api('PUT', '/admin/mcp-servers', body);
      notify(server ? 'Server saved.' : 'Server added; connecting.');
      await reload();
    },
  });
}

/** Creates or edits a virtual server; `servers` are the known upstream servers (members to pick). */
export function virtualServerDialog(virtual, servers, reload) {
  const name = h('input', {
    name: 'name',
    required: true,
    autocomplete: 'off',
    spellcheck: 'false',
    value: virtual?.name ?? '',
    readonly: Boolean(virtual),
    placeholder: 'workspace',
  });
  const description = h('input', { name: 'description', autocomplete: 'off', value: virtual?.description ?? '' });
  const chosen = new Set(virtual?.servers ?? []);
  const known = servers.map((server) => server.slug);
  const checks = h(
    'div',
    { class: 'checklist', role: 'group', 'aria-label': 'Member servers' },
    known.map((slug) =>
      h('label', {}, h('input', { type: 'checkbox', value: slug, checked: chosen.has(slug) }), h('code', { text: slug })),
    ),
  );
  const others = h('input', {
    name: 'other_servers',
    'aria-label': 'Other member slugs',
    autocomplete: 'off',
    spellcheck: 'false',
    value: [...chosen].filter((slug) => !known.includes(slug)).join(', '),
    placeholder: known.length ? 'other slugs, comma-separated' : 'docs, tickets',
  });
  const discovery = h(
    'select',
    { name: 'tool_discovery' },
    [
      ['', 'gateway default (MCP_TOOL_DISCOVERY)'],
      ['off', 'off: list every tool'],
      ['search', 'search: only search_tools and call_tool'],
    ].map(([value, label]) => h('option', { value, selected: (virtual?.configured_tool_discovery ?? '') === value, text: label })),
  );
  formDialog({
    title: virtual ? `Edit ${virtual.name}` : 'New virtual MCP server',
    testId: 'mcp-virtual-dialog',
    intro: 'Member tools are namespaced <slug>_<tool>. Members that do not exist yet are listed as missing.',
    submitLabel: virtual ? 'Save' : 'Create',
    build: () => [
      h('div', { class: 'form-grid' }, field('Name', name), field('Tool discovery', discovery)),
      field('Description', description),
      h('div', { class: 'field' }, h('span', { class: 'field-label', text: 'Members' }), known.length ? checks : null, others),
    ],
    async submit() {
      const picked = [...checks.querySelectorAll('input:checked')].map((input) => input.value);
      const typed = others.value
        .split(',')
        .map((slug) => slug.trim())
        .filter(Boolean);
      await api('PUT', '/admin/mcp-virtual-servers', {
        name: name.value.trim(),
        description: description.value.trim(),
        servers: [...picked, ...typed],
        tool_discovery: discovery.value,
      });
      notify(virtual ? 'Virtual server saved.' : 'Virtual server created.');
      await reload();
    },
  });
}
