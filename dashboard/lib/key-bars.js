// A horizontal bar chart drawn as plain SVG: one bar per key (a provider or a model), for values
// that do not stack (latency percentiles, error rates). Axis steps come from chart.js.

import { drawFitted, niceStep } from './chart.js';
import { s } from './dom.js';

const rowHeight = 26;
const labelWidth = 150;
const tickCount = 4;

/**
 * Draws `groups` ([{key, value, detail}]) into `container` at its width and redraws when it is
 * resized. `unit`: appended to values ('ms', '%'). Returns a function that stops the tracking.
 */
export function keyedBars(container, { groups, unit, label }) {
  return drawFitted(container, (width) => barsSvg({ width, groups, unit, label }));
}

function barsSvg({ width, groups, unit, label }) {
  const height = groups.length * rowHeight + 24;
  const plot = Math.max(60, width - labelWidth - 70);
  const step = niceStep(Math.max(0, ...groups.map((group) => group.value)), false);
  const top = step * tickCount;
  const x = (value) => labelWidth + (top === 0 ? 0 : (value / top) * plot);
  const shown = (value) => `${Number(value.toPrecision(3)).toLocaleString()}${unit === '%' ? '%' : ` ${unit}`}`;
  return s(
    'svg',
    { class: 'chart key-bars', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': label },
    s('title', { text: label }),
    Array.from({ length: tickCount + 1 }, (_, index) =>
      s(
        'g',
        { class: 'axis' },
        s('line', { x1: x(step * index), x2: x(step * index), y1: 0, y2: height - 20, class: index === 0 ? 'baseline' : 'grid' }),
        s('text', { x: x(step * index), y: height - 6, 'text-anchor': 'middle', text: Number((step * index).toPrecision(3)) }),
      ),
    ),
    groups.map((group, index) => {
      const y = index * rowHeight + 4;
      return s(
        'g',
        { class: 'bar' },
        s('text', { class: 'axis', x: labelWidth - 8, y: y + 14, 'text-anchor': 'end', text: truncate(group.key) }),
        s(
          'rect',
          { class: `series-${index % 8}`, x: labelWidth, y, width: Math.max(1, x(group.value) - labelWidth), height: rowHeight - 8 },
          s('title', { text: `${group.key}: ${shown(group.value)}${group.detail ? ` (${group.detail})` : ''}` }),
        ),
        s('text', { class: 'axis', x: x(group.value) + 6, y: y + 14, text: shown(group.value) }),
      );
    }),
  );
}

function truncate(text) {
  return text.length > 22 ? `${text.slice(0, 21)}…` : text;
}
