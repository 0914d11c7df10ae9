// SVG charts drawn here, no library: axes with ticks, labelled units, and a title and summary
// for screen readers. Each chart scales to its container's width (viewBox), so it fits a phone.
import {html, svg} from "/static/pages/common.js";

const W = 640, H = 300;
const M = {top: 16, right: 28, bottom: 62, left: 88};

/** Round numbers for ticks: about `count` of them covering lo..hi. */
export function ticks(lo, hi, count = 5) {
  if (hi === lo) { hi = lo + 1; }
  const raw = (hi - lo) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * power).find((s) => s >= raw) || raw;
  const first = Math.floor(lo / step) * step;
  const out = [];
  for (let v = first; v <= hi + step * 1e-9; v += step) out.push(Number(v.toFixed(10)));
  if (out[out.length - 1] < hi) out.push(Number((out[out.length - 1] + step).toFixed(10)));
  return out;
}

const compact = (n) => Math.abs(n) >= 1e6 ? `${+(n / 1e6).toFixed(1)}M`
  : Math.abs(n) >= 1e4 ? `${+(n / 1e3).toFixed(1)}k` : Number(n).toLocaleString("en");

function frame({title, summary, xLabel, yLabel, yTicks, y, xTickMarks}) {
  const plotW = W - M.left - M.right;
  const yAxis = yTicks.map((v) => svg`<g class="tick y-tick" data-value="${v}">
      <line x1="${M.left - 5}" x2="${W - M.right}" y1="${y(v)}" y2="${y(v)}" class="grid"></line>
      <text x="${M.left - 8}" y="${y(v) + 4}" text-anchor="end">${yLabel.format(v)}</text></g>`);
  const xAxis = xTickMarks.map(([x, label]) => svg`<g class="tick x-tick">
      <line x1="${x}" x2="${x}" y1="${H - M.bottom}" y2="${H - M.bottom + 5}"></line>
      <text x="${x}" y="${H - M.bottom + 22}" text-anchor="middle">${label}</text></g>`);
  return svg`<title>${title}</title><desc>${summary}</desc>
    <g class="axis y-axis">${yAxis}
      <text class="axis-label y-label" transform="translate(18 ${M.top + (H - M.top - M.bottom) / 2}) rotate(-90)"
        text-anchor="middle">${yLabel.text}</text></g>
    <g class="axis x-axis"><line x1="${M.left}" x2="${M.left + plotW}" y1="${H - M.bottom}" y2="${H - M.bottom}"></line>${xAxis}
      <text class="axis-label x-label" x="${M.left + plotW / 2}" y="${H - 8}" text-anchor="middle">${xLabel}</text></g>`;
}

function chart(id, inner, label) {
  return html`<svg id="${id}" class="chart" viewBox="0 0 ${W} ${H}" role="img" aria-label="${label}"
    preserveAspectRatio="xMidYMid meet">${inner}</svg>`;
}

/** Grouped bars per category, e.g. handle, hold and bankers' net by day. `bars`: [{name, cls, values}]. */
export function barChart({id, title, summary, categories, bars, xLabel, yLabel}) {
  const all = bars.flatMap((b) => b.values).concat([0]);
  const yTicks = ticks(Math.min(...all), Math.max(...all));
  const lo = yTicks[0], hi = yTicks[yTicks.length - 1];
  const y = (v) => M.top + (H - M.top - M.bottom) * (1 - (v - lo) / (hi - lo));
  const plotW = W - M.left - M.right;
  const band = plotW / Math.max(categories.length, 1);
  const barW = Math.max(band * 0.8 / bars.length, 0.5);
  const every = Math.ceil(categories.length / 8);
  const xTickMarks = categories.map((c, i) => [M.left + band * (i + 0.5), c.short])
    .filter((_, i) => i % every === 0);
  const rects = bars.map((b, j) => b.values.map((v, i) => {
    const x = M.left + band * i + band * 0.1 + barW * j;
    const top = Math.min(y(v), y(0)), height = Math.max(Math.abs(y(v) - y(0)), v ? 1 : 0);
    return svg`<rect class="bar ${b.cls}" x="${x.toFixed(2)}" y="${top.toFixed(2)}" width="${barW.toFixed(2)}"
      height="${height.toFixed(2)}" data-category="${categories[i].key}" data-value="${v}">
      <title>${categories[i].key}: ${b.name} ${yLabel.format(v)}</title></rect>`;
  }));
  const zero = svg`<line class="zero" x1="${M.left}" x2="${W - M.right}" y1="${y(0)}" y2="${y(0)}"></line>`;
  return [chart(id, [frame({title, summary, xLabel, yLabel, yTicks, y, xTickMarks}), rects, zero], title),
    legend(bars)];
}

/** Lines over a numeric x axis. `lines`: [{name, cls, points: [[x, y]], dots}]. */
export function lineChart({id, title, summary, lines, xLabel, yLabel, xFormat = compact, yFloor}) {
  const xs = lines.flatMap((l) => l.points.map((p) => p[0]));
  const ys = lines.flatMap((l) => l.points.map((p) => p[1]));
  if (yFloor !== undefined) ys.push(yFloor);
  const yTicks = ticks(Math.min(...ys), Math.max(...ys));
  const xTicks = ticks(Math.min(0, ...xs), Math.max(...xs, 1));
  const [ylo, yhi] = [yTicks[0], yTicks[yTicks.length - 1]];
  const [xlo, xhi] = [xTicks[0], xTicks[xTicks.length - 1]];
  const x = (v) => M.left + (W - M.left - M.right) * (v - xlo) / (xhi - xlo);
  const y = (v) => M.top + (H - M.top - M.bottom) * (1 - (v - ylo) / (yhi - ylo));
  const paths = lines.map((l) => {
    const d = l.points.map((p, i) => `${i ? "L" : "M"}${x(p[0]).toFixed(2)} ${y(p[1]).toFixed(2)}`).join(" ");
    const dots = l.dots === false ? "" : l.points.map((p) => svg`<circle class="point ${l.cls}" r="2.5"
      cx="${x(p[0]).toFixed(2)}" cy="${y(p[1]).toFixed(2)}" data-x="${p[0]}" data-y="${p[1]}"></circle>`);
    return svg`<g class="line ${l.cls}" data-name="${l.name}"><path d="${d}"></path>${dots}</g>`;
  });
  const xTickMarks = xTicks.map((v) => [x(v), xFormat(v)]);
  return [chart(id, [frame({title, summary, xLabel, yLabel, yTicks, y, xTickMarks}), paths], title),
    legend(lines)];
}

function legend(items) {
  return html`<ul class="legend">${items.map((i) =>
    html`<li><span class="swatch ${i.cls}" aria-hidden="true"></span>${i.name}</li>`)}</ul>`;
}

export const chipsLabel = (text) => ({text, format: compact});
export const percentLabel = (text, digits = 0) => ({text, format: (v) => `${Number(v).toFixed(digits)}%`});
