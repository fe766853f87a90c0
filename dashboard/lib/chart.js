// A stacked bar chart drawn as plain SVG (no library): one bar per time bucket, one colour
// per series. Colours come from the stylesheet (classes series-0 ... series-7).

import { h, s } from './dom.js';
import { bucketLabel, compact } from './format.js';

const margin = { top: 12, right: 8, bottom: 26, left: 52 };

const tickCount = 4;

/**
 * A round step (1, 2 or 5 x 10^n) so that `tickCount` steps cover `value`; whole numbers only
 * for counts, where a tick of 2.5 requests would read oddly.
 */
export function niceStep(value, wholeNumbers) {
  const raw = Math.max(value, wholeNumbers ? 1 : 1e-6) / tickCount;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = ([1, 2, 5, 10].find((multiple) => multiple * power >= raw) ?? 10) * power;
  return wholeNumbers ? Math.max(1, Math.round(step)) : step;
}

/**
 * Draws the chart into `container` at its current width and redraws when it is resized.
 * `buckets`: bucket starts (epoch ms); `series`: [{key, values}] with a value per bucket.
 * Returns a function that stops the resize tracking.
 */
export function stackedBars(container, { buckets, series, bucket, format, label }) {
  return drawFitted(container, (width) => chartSvg({ width, height: width < 500 ? 220 : 280, buckets, series, bucket, format, label }));
}

/**
 * Draws `svgAt(width)` into `container` at its width (at least 280 px) and redraws it when the
 * container's width changes by more than 8 px. Returns a function that stops the tracking.
 */
export function drawFitted(container, svgAt) {
  const draw = () => container.replaceChildren(svgAt(Math.max(280, Math.floor(container.clientWidth || 640))));
  draw();
  const observer = new ResizeObserver(() => {
    const current = container.firstElementChild;
    if (!current || Math.abs(Number(current.getAttribute('width')) - container.clientWidth) > 8) draw();
  });
  observer.observe(container);
  return () => observer.disconnect();
}

function chartSvg({ width, height, buckets, series, bucket, format, label }) {
  const plotWidth = width - margin.left - margin.right;
  const plotHeight = height - margin.top - margin.bottom;
  const totals = buckets.map((_, index) => series.reduce((sum, one) => sum + (one.values[index] ?? 0), 0));
  const step = niceStep(Math.max(0, ...totals), format !== 'dollars');
  const top = step * tickCount;
  const y = (value) => margin.top + plotHeight - (value / top) * plotHeight;
  const slot = plotWidth / Math.max(1, buckets.length);
  const barWidth = Math.max(1, Math.min(48, slot * 0.72));
  return s(
    'svg',
    { class: 'chart', width, height, viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': label },
    s('title', { text: label }),
    yAxis({ step, y, width, format }),
    xAxis({ buckets, bucket, slot, height }),
    buckets.map((start, index) =>
      bar({ start, index, series, y, x: margin.left + slot * index + (slot - barWidth) / 2, barWidth, bucket, format }),
    ),
  );
}

function yAxis({ step, y, width, format }) {
  return Array.from({ length: tickCount + 1 }, (_, index) => {
    const value = step * index;
    const position = y(value);
    return s(
      'g',
      { class: 'axis' },
      s('line', { x1: margin.left, x2: width - margin.right, y1: position, y2: position, class: index === 0 ? 'baseline' : 'grid' }),
      s('text', {
        x: margin.left - 6,
        y: position + 4,
        'text-anchor': 'end',
        text: axisLabel(value, format),
      }),
    );
  });
}

/** Axis numbers: 12.5K, $1.2K, and small dollar amounts with two significant digits ($0.004). */
function axisLabel(value, format) {
  if (format !== 'dollars') return compact(value);
  return value >= 1 || value === 0 ? `$${compact(value)}` : `$${Number(value.toPrecision(2))}`;
}

function xAxis({ buckets, bucket, slot, height }) {
  const every = Math.max(1, Math.ceil(64 / slot));
  return buckets.flatMap((start, index) =>
    index % every === 0
      ? [
          s('text', {
            class: 'axis',
            x: margin.left + slot * index + slot / 2,
            y: height - 8,
            'text-anchor': 'middle',
            text: bucketLabel(start, bucket),
          }),
        ]
      : [],
  );
}

function bar({ start, index, series, y, x, barWidth, bucket, format }) {
  let base = 0;
  const pieces = [];
  series.forEach((one, seriesIndex) => {
    const value = one.values[index] ?? 0;
    if (value <= 0) return;
    const top = y(base + value);
    const bottom = y(base);
    base += value;
    const shown = format === 'dollars' ? `$${value.toFixed(4)}` : value.toLocaleString();
    pieces.push(
      s(
        'rect',
        { class: `series-${seriesIndex % 8}`, x, y: top, width: barWidth, height: Math.max(0.5, bottom - top) },
        s('title', { text: `${one.key} · ${bucketLabel(start, bucket)}: ${shown}` }),
      ),
    );
  });
  return s('g', { class: 'bar' }, pieces);
}

/** The legend under a chart: a swatch and the key of each series. */
export function legend(series) {
  return h(
    'ul',
    { class: 'legend' },
    series.map((one, index) => h('li', {}, h('span', { class: ['swatch', `series-${index % 8}`] }), h('span', { text: one.key }))),
  );
}
