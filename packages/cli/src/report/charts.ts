/**
 * Inline SVG charts for the report: step charts of sampled series and a timeline of moments.
 * Plain SVG with no script, so the page is self-contained and renders anywhere; lines and markers
 * use crisp edges so every drawn pixel has its series' exact colour (the browser test relies on
 * it to prove the charts render).
 */

export interface ChartSeries {
  readonly name: string;
  readonly values: readonly number[];
  readonly color: string;
  /** A dashed horizontal reference line, e.g. a pool's capacity. */
  readonly ceiling?: number;
}

export interface TimeAxis {
  readonly startUnixMs: number;
  readonly durationMs: number;
}

/** Tableau 10: distinguishable, and readable by most colour-blind viewers. */
export const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];

const WIDTH = 960;
const PLOT = { left: 56, right: 44, top: 24, bottom: 28 };

export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string);

const pad = (n: number) => String(n).padStart(2, "0");

/** UTC clock labels: HH:MM within a day, MM-DD HH:MM across days. */
function clockLabel(unixMs: number, multiDay: boolean): string {
  const d = new Date(unixMs);
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
  return multiDay ? `${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${time}` : time;
}

/** A round tick spacing giving about `count` ticks over `span`. */
function niceStep(span: number, count: number, steps: readonly number[]): number {
  const raw = span / count;
  return steps.find((s) => s >= raw) ?? (steps.at(-1) as number) * Math.ceil(raw / (steps.at(-1) as number));
}

const MINUTE = 60_000;
const TIME_STEPS = [5, 10, 15, 30, 60, 120, 180, 360, 720, 1440].map((m) => m * MINUTE);

function timeAxis(axis: TimeAxis, height: number): { x: (t: number) => number; svg: string } {
  const plotWidth = WIDTH - PLOT.left - PLOT.right;
  const x = (t: number) => PLOT.left + (plotWidth * t) / Math.max(axis.durationMs, 1);
  const step = niceStep(axis.durationMs, 8, TIME_STEPS);
  const multiDay = axis.durationMs > 24 * 60 * MINUTE;
  const ticks: string[] = [];
  for (let t = 0; t <= axis.durationMs; t += step) {
    ticks.push(
      `<line x1="${x(t)}" x2="${x(t)}" y1="${PLOT.top}" y2="${height - PLOT.bottom}" class="grid"/>` +
        `<text x="${x(t)}" y="${height - PLOT.bottom + 16}" text-anchor="middle">${clockLabel(axis.startUnixMs + t, multiDay)}</text>`,
    );
  }
  return { x, svg: ticks.join("") };
}

function legend(entries: ReadonlyArray<{ name: string; color: string }>): string {
  return `<ul class="legend">${entries
    .map((e) => `<li><span class="swatch" style="background:${e.color}"></span>${escapeHtml(e.name)}</li>`)
    .join("")}</ul>`;
}

/** Sampled series as step lines over the time axis; `times` are ms since the start. */
export function stepChart(
  id: string,
  title: string,
  unit: string,
  times: readonly number[],
  series: readonly ChartSeries[],
  axis: TimeAxis,
): string {
  const height = 260;
  const { x, svg: xAxis } = timeAxis(axis, height);
  const top = Math.max(1, ...series.flatMap((s) => [...s.values, s.ceiling ?? 0]));
  const yStep = niceStep(top, 5, [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000, 2000, 5000]);
  const yMax = Math.ceil(top / yStep) * yStep;
  const y = (v: number) => height - PLOT.bottom - ((height - PLOT.top - PLOT.bottom) * v) / yMax;
  const yTicks: string[] = [];
  for (let v = 0; v <= yMax; v += yStep) {
    yTicks.push(
      `<line x1="${PLOT.left}" x2="${WIDTH - PLOT.right}" y1="${y(v)}" y2="${y(v)}" class="grid"/>` +
        `<text x="${PLOT.left - 6}" y="${y(v) + 4}" text-anchor="end">${v}</text>`,
    );
  }
  const lines = series.map((s) => {
    const points = s.values.map((v, i) => [x(times[i] ?? 0), y(v)] as const);
    const path = points.map(([px, py], i) => (i === 0 ? `M${px} ${py}` : `H${px} V${py}`)).join(" ");
    const ceiling =
      s.ceiling === undefined
        ? ""
        : `<line x1="${PLOT.left}" x2="${WIDTH - PLOT.right}" y1="${y(s.ceiling)}" y2="${y(s.ceiling)}" stroke="${s.color}" stroke-dasharray="6 4" shape-rendering="crispEdges"/>`;
    return `${ceiling}<path d="${path}" fill="none" stroke="${s.color}" stroke-width="2" shape-rendering="crispEdges"><title>${escapeHtml(s.name)}</title></path>`;
  });
  return `<figure class="chart" id="${id}">
<figcaption>${escapeHtml(title)}</figcaption>
<svg viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" role="img" aria-label="${escapeHtml(title)}">
<g class="axis">${xAxis}${yTicks.join("")}<text x="${PLOT.left - 6}" y="12" text-anchor="end" class="unit">${escapeHtml(unit)}</text></g>
${lines.join("\n")}
</svg>
${legend(series)}
</figure>`;
}

export interface Mark {
  readonly t: number;
  readonly lane: string;
  readonly text: string;
}

/** One lane per kind of moment, a marker per moment with its description as a tooltip. */
export function momentsChart(
  id: string,
  title: string,
  lanes: ReadonlyArray<{ name: string; color: string }>,
  marks: readonly Mark[],
  axis: TimeAxis,
): string {
  const laneHeight = 28;
  const height = PLOT.top + PLOT.bottom + laneHeight * lanes.length;
  const { x, svg: xAxis } = timeAxis(axis, height);
  const laneY = new Map(lanes.map((l, i) => [l.name, PLOT.top + i * laneHeight]));
  const color = new Map(lanes.map((l) => [l.name, l.color]));
  const laneLabels = lanes.map(
    (l) => `<text x="${PLOT.left + 4}" y="${(laneY.get(l.name) as number) + 12}" class="lane">${escapeHtml(l.name)}</text>`,
  );
  const markers = marks.map((m) => {
    const top = (laneY.get(m.lane) as number) + 14;
    return `<rect x="${Math.round(x(m.t)) - 2}" y="${top}" width="5" height="12" fill="${color.get(m.lane)}" shape-rendering="crispEdges"><title>${escapeHtml(m.text)}</title></rect>`;
  });
  return `<figure class="chart" id="${id}">
<figcaption>${escapeHtml(title)}</figcaption>
<svg viewBox="0 0 ${WIDTH} ${height}" width="${WIDTH}" height="${height}" role="img" aria-label="${escapeHtml(title)}">
<g class="axis">${xAxis}${laneLabels.join("")}</g>
${markers.join("\n")}
</svg>
${legend(lanes.map((l) => ({ name: `${l.name} (${marks.filter((m) => m.lane === l.name).length})`, color: l.color })))}
</figure>`;
}
