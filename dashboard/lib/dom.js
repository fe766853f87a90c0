// Tiny DOM helpers. Text always goes through textContent (never innerHTML): everything the
// dashboard shows comes from the admin API, so nothing in it is ever parsed as markup.

/**
 * Creates an element. `props`: `class`, `text`, `on<Event>` handlers, `dataset`, and any
 * other key as an attribute (`true` sets it empty, `false`/null/undefined leaves it out).
 * Children: nodes, strings, or nested arrays; null/false are skipped.
 */
export function h(tag, props = {}, ...children) {
  return build(document.createElement(tag), props, children);
}

const svgNamespace = 'http://www.w3.org/2000/svg';

/** Like h() for SVG elements. */
export function s(tag, props = {}, ...children) {
  return build(document.createElementNS(svgNamespace, tag), props, children);
}

function build(element, props, children) {
  for (const [name, value] of Object.entries(props ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name === 'class') element.setAttribute('class', Array.isArray(value) ? value.filter(Boolean).join(' ') : value);
    else if (name === 'text') element.textContent = String(value);
    else if (name === 'dataset') Object.assign(element.dataset, value);
    else if (name.startsWith('on') && typeof value === 'function') element.addEventListener(name.slice(2).toLowerCase(), value);
    else if (name === 'value' && 'value' in element) element.value = String(value);
    else if (name === 'checked' && 'checked' in element) element.checked = Boolean(value);
    else element.setAttribute(name, value === true ? '' : String(value));
  }
  append(element, children);
  return element;
}

/** Appends nodes, strings and nested arrays of them. */
export function append(parent, children) {
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    parent.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return parent;
}

/** Replaces the children of `parent`. */
export function replace(parent, ...children) {
  parent.replaceChildren();
  return append(parent, children);
}

/** A labelled form field; `control` is an input/select built by the caller. */
export function field(label, control, hint) {
  return h(
    'label',
    { class: 'field' },
    h('span', { class: 'field-label', text: label }),
    control,
    hint ? h('small', { text: hint }) : null,
  );
}

/** The name of a column given as '' (the row buttons): read by screen readers, not shown. */
const actionsHeader = 'Actions';

/**
 * A table inside a horizontally scrolling wrapper. Each cell is labelled with its column
 * (`data-label`), so that on narrow screens the stylesheet can show every row as a card. A
 * header '' (the row buttons' column) is named "Actions" for assistive technology only.
 */
export function table(headers, rows, options = {}) {
  for (const row of rows) {
    [...row.children].forEach((cell, index) => {
      if (headers[index]) cell.dataset.label = headers[index];
      // One box per cell: beside its label in the narrow layout (display: contents otherwise).
      cell.append(h('div', { class: 'cell-body' }, [...cell.childNodes]));
    });
  }
  return h(
    'div',
    { class: 'table-wrap', tabindex: '0', role: 'region', 'aria-label': options.label ?? 'table' },
    h(
      'table',
      { class: options.class },
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          headers.map((header) =>
            header === ''
              ? h('th', { scope: 'col' }, h('span', { class: 'visually-hidden', text: actionsHeader }))
              : h('th', { scope: 'col', text: header }),
          ),
        ),
      ),
      h('tbody', {}, rows),
    ),
  );
}

/** An empty-state line. */
export function empty(text) {
  return h('p', { class: 'empty', text });
}

/** A small status pill. */
export function badge(text, tone = 'neutral') {
  return h('span', { class: ['badge', `badge-${tone}`], text });
}

/** A usage bar: `used` of `cap` (no bar without a cap); `label` names it ("Requests used"). */
export function meter(used, cap, label) {
  if (cap === null || cap === undefined || cap <= 0) return null;
  const ratio = Math.min(1, used / cap);
  const tone = ratio >= 1 ? 'full' : ratio >= 0.8 ? 'high' : 'ok';
  const bar = h('span', { class: ['meter-fill', `meter-${tone}`] });
  // The CSSOM (not a style attribute) sets the width, which the CSP allows.
  bar.style.width = `${(ratio * 100).toFixed(1)}%`;
  return h(
    'span',
    {
      class: 'meter',
      role: 'meter',
      'aria-label': label,
      'aria-valuemin': '0',
      'aria-valuemax': String(cap),
      'aria-valuenow': String(used),
      'aria-valuetext': `${used} of ${cap}`,
    },
    bar,
  );
}

/**
 * Shows `fresh` (a table from table(), or anything else) in `holder`. When `holder` already shows
 * a table with the same columns, its rows are updated in place (matched by their data-*
 * attributes) and only the cells that changed are replaced, so that a focused button survives a
 * refresh. Row buttons must therefore look their data up when clicked, not capture it.
 */
export function patch(holder, fresh) {
  const current = holder.firstElementChild;
  if (holder.childElementCount !== 1 || !sameTable(current, fresh)) return replace(holder, fresh);
  patchRows(current.querySelector('tbody'), fresh.querySelector('tbody'));
  return holder;
}

function sameTable(current, fresh) {
  const heads = (element) => (element.classList.contains('table-wrap') ? element.querySelector('thead')?.textContent : undefined);
  return (
    heads(current) !== undefined &&
    heads(current) === heads(fresh) &&
    current.getAttribute('aria-label') === fresh.getAttribute('aria-label')
  );
}

const rowKey = (row) => JSON.stringify(Object.entries(row.dataset));

function patchRows(body, freshBody) {
  const existing = new Map([...body.rows].map((row) => [rowKey(row), row]));
  const wanted = [...freshBody.rows];
  wanted.forEach((fresh, index) => {
    const old = existing.get(rowKey(fresh));
    existing.delete(rowKey(fresh));
    const row = old && old.cells.length === fresh.cells.length ? old : fresh;
    // Snapshots: a replaced cell moves out of `fresh`, which shrinks its live `cells`.
    const freshCells = [...fresh.cells];
    if (row === old) [...old.cells].forEach((cell, position) => patchNode(cell, freshCells[position]));
    if (body.rows[index] !== row) body.insertBefore(row, body.rows[index] ?? null);
  });
  for (const row of [...body.rows].slice(wanted.length)) row.remove();
}

/** Makes `node` equal `fresh`, replacing whole subtrees except the path to the focused element. */
function patchNode(node, fresh) {
  if (node.isEqualNode(fresh)) return;
  const focused = node.contains(document.activeElement);
  if (!focused || node.nodeName !== fresh.nodeName || node.childNodes.length !== fresh.childNodes.length) {
    node.replaceWith(fresh);
    return;
  }
  for (const { name } of [...node.attributes]) if (!fresh.hasAttribute(name)) node.removeAttribute(name);
  for (const { name, value } of [...fresh.attributes]) if (node.getAttribute(name) !== value) node.setAttribute(name, value);
  const freshChildren = [...fresh.childNodes];
  [...node.childNodes].forEach((child, index) => patchNode(child, freshChildren[index]));
}
