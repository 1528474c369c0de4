/**
 * The report's charts, drawn by Apache ECharts' server-side SVG renderer (no browser, no DOM):
 * each function takes the recorded data and returns one static SVG string. Animation is off and
 * every label that matters is drawn, not left to a tooltip, since the page carries no script.
 * Times on every axis are UTC, whatever the machine's time zone.
 */
import * as echarts from "echarts";

/** Tableau 10: distinguishable, and readable by most colour-blind viewers. */
export const PALETTE = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];

/** Width every chart is drawn at; the page scales them to the window. */
const WIDTH = 1360;
const TEXT = { color: "#444", fontFamily: "system-ui, sans-serif", fontSize: 12 };

export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c] as string);

const pad = (n: number) => String(n).padStart(2, "0");

/** UTC clock labels: HH:MM within a day, MM-DD HH:MM across days. */
function clockLabel(unixMs: number, multiDay: boolean): string {
  const d = new Date(unixMs);
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
  return multiDay ? `${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${time}` : time;
}

/** Renders one ECharts option to SVG at the report's width. */
function render(height: number, option: echarts.EChartsOption): string {
  const chart = echarts.init(null, null, { renderer: "svg", ssr: true, width: WIDTH, height });
  chart.setOption({ animation: false, textStyle: TEXT, color: PALETTE, ...option });
  const svg = chart.renderToSVGString();
  chart.dispose();
  return svg;
}

export interface TimeAxis {
  readonly startUnixMs: number;
  readonly durationMs: number;
}

/** A time x axis (values are Unix ms) labelled in UTC. */
function timeXAxis(axis: TimeAxis, gridIndex = 0): echarts.EChartsOption["xAxis"] {
  const multiDay = axis.durationMs > 24 * 3_600_000;
  return {
    type: "time",
    gridIndex,
    min: axis.startUnixMs,
    max: axis.startUnixMs + axis.durationMs,
    axisLabel: { formatter: (value: number) => clockLabel(value, multiDay), hideOverlap: true },
    splitLine: { show: true, lineStyle: { color: "#eee" } },
  };
}

export interface AreaSeries {
  readonly name: string;
  readonly values: readonly number[];
  readonly color?: string;
}

/** Series stacked as areas over sampled times, with optional dashed reference lines. */
export function stackedAreaChart(
  unit: string,
  times: readonly number[],
  series: readonly AreaSeries[],
  axis: TimeAxis,
  references: ReadonlyArray<{ name: string; value: number }> = [],
): string {
  const at = (i: number) => axis.startUnixMs + (times[i] ?? 0);
  return render(300, {
    grid: { left: 64, right: 24, top: 40, bottom: 36 },
    legend: { top: 4, right: 24, itemWidth: 14, itemHeight: 10 },
    xAxis: timeXAxis(axis),
    yAxis: { type: "value", name: unit, nameTextStyle: { align: "right" }, minInterval: 1, splitLine: { lineStyle: { color: "#eee" } } },
    series: [
      ...series.map((s) => ({
        type: "line" as const,
        name: s.name,
        stack: "total",
        step: "end" as const,
        symbol: "none",
        lineStyle: { width: 1 },
        // Opaque, so each series paints its own colour exactly (the browser test counts it).
        areaStyle: { opacity: 1 },
        ...(s.color === undefined ? {} : { itemStyle: { color: s.color } }),
        data: s.values.map((v, i) => [at(i), v]),
      })),
      ...references.map((r) => ({
        type: "line" as const,
        name: r.name,
        symbol: "none",
        itemStyle: { color: "#333" },
        lineStyle: { type: "dashed" as const, width: 1.5, color: "#333" },
        data: [
          [axis.startUnixMs, r.value],
          [axis.startUnixMs + axis.durationMs, r.value],
        ],
      })),
    ],
  });
}

/** Per category: bars for measured values and a marker for a reference (e.g. quota). */
export function barsAgainstReference(
  unit: string,
  categories: readonly string[],
  bars: ReadonlyArray<{ name: string; values: readonly number[]; color: string }>,
  reference: { name: string; values: readonly number[] },
): string {
  const height = 70 + 28 * Math.max(categories.length, 2);
  return render(height, {
    grid: { left: 160, right: 40, top: 36, bottom: 30 },
    legend: { top: 4, right: 40, itemWidth: 14, itemHeight: 10 },
    yAxis: { type: "category", data: [...categories], inverse: true },
    xAxis: { type: "value", name: unit, minInterval: 1, splitLine: { lineStyle: { color: "#eee" } } },
    series: [
      ...bars.map((b) => ({
        type: "bar" as const,
        name: b.name,
        itemStyle: { color: b.color },
        label: { show: true, position: "right" as const, formatter: ({ value }: { value: unknown }) => String(value) },
        data: [...b.values],
      })),
      {
        type: "scatter" as const,
        name: reference.name,
        symbol: "rect",
        symbolSize: [4, 24],
        itemStyle: { color: "#222", opacity: 1 },
        label: { show: true, position: "top" as const, formatter: ({ value }: { value: unknown }) => `${reference.name} ${value}` },
        data: [...reference.values],
      },
    ],
  });
}

/** A row-by-time heatmap with a continuous colour scale; null cells show the grid's grey. */
export function heatmapChart(
  rows: readonly string[],
  times: readonly number[],
  values: ReadonlyArray<ReadonlyArray<number | null>>,
  axis: TimeAxis,
  scale: { min: number; max: number; unit: string; colors: readonly string[] },
): string {
  const multiDay = axis.durationMs > 24 * 3_600_000;
  const data: Array<[number, number, number]> = [];
  values.forEach((row, r) => {
    row.forEach((v, i) => {
      if (v !== null) data.push([i, r, v]);
    });
  });
  return render(90 + 12 * Math.max(rows.length, 4), {
    grid: { left: 200, right: 24, top: 44, bottom: 36, show: true, backgroundColor: NO_DATA, borderWidth: 0 },
    visualMap: {
      type: "continuous",
      min: scale.min,
      max: scale.max,
      text: [`${scale.max} ${scale.unit}`, `${scale.min} ${scale.unit}`],
      orient: "horizontal",
      top: 0,
      right: 24,
      itemHeight: 220,
      itemWidth: 12,
      inRange: { color: [...scale.colors] },
      calculable: false,
    },
    xAxis: {
      type: "category",
      data: times.map((t) => clockLabel(axis.startUnixMs + t, multiDay)),
      axisLabel: { hideOverlap: true },
      splitArea: { show: false },
    },
    yAxis: { type: "category", data: [...rows], inverse: true, axisLabel: { fontSize: 10, interval: 0 } },
    series: [{ type: "heatmap", data, emphasis: { disabled: true } }],
  });
}

/** The grey of a cell with no data (a GPU off the bus or resetting, a rebooting node). */
export const NO_DATA = "#c9c9c9";

export interface Bar {
  readonly row: number;
  readonly from: number;
  readonly to: number;
  /** Drawn inside the bar when it fits. */
  readonly label?: string;
}

/** The custom series drawing one group's bars: a rectangle per bar, its label inside if it fits. */
function barSeries(name: string, color: string, bars: readonly Bar[], axis: TimeAxis) {
  return {
    type: "custom" as const,
    name,
    itemStyle: { color },
    renderItem: ((_params, api) => {
      const [x0, y] = api.coord([api.value(1), api.value(0)]) as [number, number];
      const [x1] = api.coord([api.value(2), api.value(0)]) as [number, number];
      const h = ((api.size?.([0, 1]) ?? [0, 0]) as number[])[1] as number;
      const width = Math.max(x1 - x0, 1);
      const label = String(api.value(3));
      return {
        type: "rect",
        shape: { x: x0, y: y - h * 0.4, width, height: h * 0.8 },
        style: {
          fill: color,
          stroke: "#fff",
          lineWidth: 0.5,
          text: width > label.length * 6 + 6 ? label : "",
          textFill: "#fff",
          fontSize: 9,
        },
      };
    }) as echarts.CustomSeriesOption["renderItem"],
    encode: { x: [1, 2], y: 0 },
    data: bars.map((b) => [b.row, axis.startUnixMs + b.from, axis.startUnixMs + b.to, b.label ?? ""]),
  };
}

/**
 * Bars per row over time (a Gantt chart), one legend entry per group, with optional labelled
 * point marks on top (drawn, not hovered: the page has no script).
 */
export function barsOverTimeChart(
  rows: readonly string[],
  groups: ReadonlyArray<{ name: string; color: string; bars: readonly Bar[] }>,
  axis: TimeAxis,
  marks: ReadonlyArray<{ row: number; t: number; label: string }> = [],
): string {
  const rowHeight = rows.length > 24 ? 14 : 20;
  return render(84 + rowHeight * Math.max(rows.length, 3), {
    grid: { left: 200, right: 24, top: 40, bottom: 36 },
    legend: { top: 4, left: 192, itemWidth: 14, itemHeight: 10 },
    xAxis: timeXAxis(axis),
    yAxis: {
      type: "category",
      data: [...rows],
      inverse: true,
      axisLabel: { fontSize: 10, interval: 0 },
      splitLine: { show: true, lineStyle: { color: "#f2f2f2" } },
    },
    series: [
      ...groups.map((g) => barSeries(g.name, g.color, g.bars, axis)),
      ...(marks.length === 0
        ? []
        : [
            {
              type: "scatter" as const,
              name: "XID",
              symbol: "triangle",
              symbolSize: 10,
              itemStyle: { color: "#b00020", opacity: 1 },
              label: {
                show: true,
                position: "right" as const,
                formatter: "{@[2]}",
                color: "#b00020",
                fontSize: 10,
                fontWeight: "bold" as const,
              },
              labelLayout: { hideOverlap: true },
              data: marks.map((m) => [axis.startUnixMs + m.t, m.row, m.label]),
            },
          ]),
    ],
  });
}

/** One lane per kind of moment, each moment a mark with its label drawn beside it. */
export function momentsChart(
  lanes: ReadonlyArray<{ name: string; color: string }>,
  marks: ReadonlyArray<{ lane: number; t: number; label: string }>,
  axis: TimeAxis,
): string {
  return render(70 + 44 * lanes.length, {
    grid: { left: 200, right: 24, top: 16, bottom: 36 },
    xAxis: timeXAxis(axis),
    yAxis: {
      type: "category",
      data: lanes.map((l) => l.name),
      inverse: true,
      axisLabel: { fontSize: 11 },
      splitLine: { show: true, lineStyle: { color: "#eee" } },
    },
    series: lanes.map((lane, i) => ({
      type: "scatter" as const,
      name: lane.name,
      symbol: "rect",
      symbolSize: [6, 16],
      // Scatter marks are translucent by default: opaque, each lane paints its own colour.
      itemStyle: { color: lane.color, opacity: 1 },
      label: { show: true, position: "top" as const, formatter: "{@[2]}", fontSize: 10, color: "#333" },
      labelLayout: { hideOverlap: true },
      data: marks.filter((m) => m.lane === i).map((m) => [axis.startUnixMs + m.t, lane.name, m.label]),
    })),
  });
}

/** Counts per bucket, stacked by group. */
export function histogramChart(
  unit: string,
  buckets: readonly string[],
  groups: ReadonlyArray<{ name: string; counts: readonly number[] }>,
): string {
  return render(300, {
    grid: { left: 64, right: 24, top: 40, bottom: 36 },
    legend: { top: 4, right: 24, itemWidth: 14, itemHeight: 10 },
    xAxis: { type: "category", data: [...buckets] },
    yAxis: { type: "value", name: unit, minInterval: 1, splitLine: { lineStyle: { color: "#eee" } } },
    series: groups.map((g) => ({
      type: "bar" as const,
      name: g.name,
      stack: "total",
      label: { show: true, formatter: ({ value }: { value: unknown }) => (Number(value) > 0 ? String(value) : "") },
      data: [...g.counts],
    })),
  });
}

/** Lines over seconds: each measured series drawn solid beside its modelled twin, dashed, in the same colour. */
export function measuredAgainstModelChart(
  unit: string,
  seconds: readonly number[],
  pairs: ReadonlyArray<{ readonly name: string; readonly measured: readonly number[]; readonly modelled: readonly number[] }>,
  phases: ReadonlyArray<{ readonly phase: string; readonly start: number; readonly end: number }> = [],
): string {
  const line = (name: string, values: readonly number[], color: string, dashed: boolean) => ({
    type: "line" as const,
    name,
    symbol: "none",
    itemStyle: { color },
    lineStyle: { width: dashed ? 2 : 1.2, color, ...(dashed ? { type: "dashed" as const } : {}) },
    data: values.map((v, i) => [seconds[i] ?? 0, v]),
  });
  return render(320, {
    grid: { left: 64, right: 24, top: 56, bottom: 40 },
    legend: { top: 4, right: 24, itemWidth: 18, itemHeight: 10 },
    xAxis: { type: "value", name: "s", min: 0, max: Math.ceil(seconds.at(-1) ?? 0), splitLine: { lineStyle: { color: "#eee" } } },
    yAxis: { type: "value", name: unit, nameTextStyle: { align: "right" }, scale: true, splitLine: { lineStyle: { color: "#eee" } } },
    series: [
      ...pairs.flatMap((p, i) => [
        line(`${p.name}, measured`, p.measured, PALETTE[i % PALETTE.length] as string, false),
        line(`${p.name}, model`, p.modelled, PALETTE[i % PALETTE.length] as string, true),
      ]),
      // The phases, named along the top.
      {
        type: "line" as const,
        name: "",
        data: [],
        markArea: {
          silent: true,
          itemStyle: { color: "rgba(0,0,0,0.03)", borderColor: "#ddd", borderWidth: 1 },
          label: { position: "insideTop" as const, color: "#666", fontSize: 11 },
          data: phases.map((p) => [{ name: p.phase, xAxis: p.start }, { xAxis: p.end }]),
        },
      },
    ],
  });
}
