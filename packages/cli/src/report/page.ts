/**
 * The report page: one self-contained HTML document (inline CSS and SVG, no script, nothing
 * fetched), full width, answering in order what a person looks for first: where the GPUs went
 * (per pool, per project against quota), how busy they were (per GPU), who held them (per GPU
 * over time), what broke (per node, XIDs and reboots drawn), who waited and why, and for how
 * long; then every failure and eviction on one timeline, and the totals.
 */
import { formatDuration } from "@gpusynth/blueprint";
import {
  barsAgainstReference,
  barsOverTimeChart,
  escapeHtml,
  heatmapChart,
  histogramChart,
  momentsChart,
  PALETTE,
  stackedAreaChart,
} from "./charts.js";
import { type ChartSeries, MAX_GPU_ROWS, type MomentKind, NODE_STATES, type Timeline } from "./timeline.js";

/** Projects drawn one by one; the rest are summed into one series. */
const MAX_PROJECTS = PALETTE.length - 1;
const OTHERS_COLOR = PALETTE[PALETTE.length - 1] as string;
/** Nodes drawn one by one in the health chart; past this, only nodes that were not always Ready. */
const MAX_NODE_ROWS = 96;

export const LANES: ReadonlyArray<{ kind: MomentKind; name: string; color: string }> = [
  { kind: "failed", name: "workload failed", color: "#e15759" },
  { kind: "evicted", name: "workload evicted", color: "#f28e2b" },
  { kind: "gpu-fault", name: "GPU fault (XID)", color: "#b07aa1" },
  { kind: "node-reboot", name: "node reboot", color: "#4e79a7" },
];

export const NODE_STATE_COLORS: Readonly<Record<(typeof NODE_STATES)[number], string>> = {
  Ready: "#d4ecd0",
  MemoryPressure: "#f6c85f",
  cordoned: "#f28e2b",
  "NotReady (rebooting)": "#e15759",
};

/** Utilisation colours, light (idle) to dark (busy): a sequential blue scale. */
const UTILISATION_COLORS = ["#f7fbff", "#c6dbef", "#6baed6", "#2171b5", "#08306b"];

/** Reasons coloured by what they say: grey not tried yet, red no room, amber and yellow quota. */
const REASON_COLORS: Readonly<Record<string, string>> = {
  NotYetAttempted: "#bab0ac",
  Unschedulable: "#e15759",
  OverLimit: "#f28e2b",
  NonPreemptibleOverQuota: "#edc948",
};

const WAIT_BUCKETS: ReadonlyArray<{ name: string; upToMs: number }> = [
  { name: "< 1 min", upToMs: 60_000 },
  { name: "1–5 min", upToMs: 300_000 },
  { name: "5–15 min", upToMs: 900_000 },
  { name: "15–60 min", upToMs: 3_600_000 },
  { name: "1–4 h", upToMs: 4 * 3_600_000 },
  { name: "4–24 h", upToMs: 24 * 3_600_000 },
  { name: "≥ 24 h", upToMs: Number.POSITIVE_INFINITY },
];

const peak = (values: readonly number[]) => values.reduce((m, v) => Math.max(m, v), 0);
const mean = (values: readonly number[]) => (values.length === 0 ? 0 : values.reduce((s, v) => s + v, 0) / values.length);

/** The series with the largest peaks one by one, the rest summed into one "others" series. */
function topSeries<T extends ChartSeries>(series: readonly T[], max: number): Array<{ name: string; values: number[]; color: string }> {
  const ranked = [...series].filter((s) => s.values.some((v) => v > 0)).sort((a, b) => peak(b.values) - peak(a.values));
  const colored = ranked.slice(0, max).map((s, i) => ({ name: s.name, values: s.values, color: PALETTE[i % PALETTE.length] as string }));
  const rest = ranked.slice(max);
  if (rest.length === 0) return colored;
  const others = (rest[0] as T).values.map((_, i) => rest.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  return [...colored, { name: `${rest.length} other projects`, values: others, color: OTHERS_COLOR }];
}

/** Heatmap columns at most: a cell per sample up to this many, else the mean of consecutive samples. */
const MAX_HEATMAP_COLUMNS = 144;

/** Samples merged into at most MAX_HEATMAP_COLUMNS columns; a cell is null when no merged sample has data. */
function coarsen(times: readonly number[], rows: ReadonlyArray<ReadonlyArray<number | null>>): [number[], Array<Array<number | null>>] {
  const width = Math.ceil(times.length / MAX_HEATMAP_COLUMNS);
  const columns = times.filter((_, i) => i % width === 0);
  const cells = rows.map((row) =>
    columns.map((_, c) => {
      const merged = row.slice(c * width, (c + 1) * width).filter((v): v is number => v !== null);
      return merged.length === 0 ? null : Math.round(mean(merged));
    }),
  );
  return [columns, cells];
}

/** The spans of samples in which a node was in `state`: from its first sample to the next one's. */
function stateRuns(states: readonly number[], state: number, times: readonly number[], endMs: number): Array<{ from: number; to: number }> {
  const runs: Array<{ from: number; to: number }> = [];
  for (let i = 0; i < states.length; i++) {
    if (states[i] !== state) continue;
    const from = times[i] as number;
    while (i + 1 < states.length && states[i + 1] === state) i++;
    runs.push({ from, to: times[i + 1] ?? endMs });
  }
  return runs;
}

function figure(id: string, title: string, body: string, note = ""): string {
  return `<figure class="chart" id="${id}">
<figcaption>${escapeHtml(title)}</figcaption>
${note === "" ? "" : `<p class="note">${note}</p>`}
${body}
</figure>`;
}

function totalsTable(timeline: Timeline): string {
  const header = ["project", "submitted", "started", "completed", "failed", "cancelled", "preempted", "GPU-hours"];
  const rows = timeline.summary.projects.map(
    (p) =>
      `<tr><th scope="row">${escapeHtml(p.name)}</th>${[
        p.submitted,
        p.started,
        p.completed,
        p.failed,
        p.cancelled,
        p.preempted,
        (p.gpuMs / 3_600_000).toFixed(1),
      ]
        .map((v) => `<td>${v}</td>`)
        .join("")}</tr>`,
  );
  return `<table><thead><tr>${header.map((h) => `<th scope="col">${h}</th>`).join("")}</tr></thead><tbody>${rows.join("")}</tbody></table>`;
}

function headline(timeline: Timeline): string {
  const capacity = timeline.allocation.reduce((s, p) => s + p.capacity, 0);
  const held = timeline.times.map((_, i) => timeline.allocation.reduce((s, p) => s + (p.values[i] ?? 0), 0));
  const totals = timeline.summary.projects.reduce(
    (t, p) => ({
      submitted: t.submitted + p.submitted,
      failed: t.failed + p.failed,
      preempted: t.preempted + p.preempted,
      gpuMs: t.gpuMs + p.gpuMs,
    }),
    { submitted: 0, failed: 0, preempted: 0, gpuMs: 0 },
  );
  const faults = timeline.moments.filter((m) => m.kind === "gpu-fault").length;
  const figures: Array<[string, string]> = [
    ["GPUs", String(capacity)],
    ["mean allocation", `${capacity === 0 ? 0 : Math.round((100 * mean(held)) / capacity)} %`],
    ["workloads submitted", String(totals.submitted)],
    ["failed", String(totals.failed)],
    ["evictions", String(totals.preempted)],
    ["GPU faults", String(faults)],
    ["GPU-hours", (totals.gpuMs / 3_600_000).toFixed(0)],
  ];
  return `<dl class="headline">${figures.map(([k, v]) => `<div><dt>${k}</dt><dd>${v}</dd></div>`).join("")}</dl>`;
}

export function reportPage(timeline: Timeline): string {
  const axis = { startUnixMs: timeline.startUnixMs, durationMs: timeline.durationMs };
  const capacity = timeline.allocation.reduce((s, p) => s + p.capacity, 0);
  const projects = topSeries(timeline.projectAllocation, MAX_PROJECTS);
  const projectColor = new Map(projects.map((p) => [p.name, p.color]));

  const perPool = figure(
    "allocation",
    "GPUs allocated per node pool (stacked; dashed: the cluster's GPUs)",
    stackedAreaChart(
      "GPUs",
      timeline.times,
      timeline.allocation.map((p, i) => ({ name: p.name, values: p.values, color: PALETTE[i % PALETTE.length] as string })),
      axis,
      [{ name: "cluster GPUs", value: capacity }],
    ),
  );
  const perProject = figure(
    "projects",
    "GPUs allocated per project (stacked; dashed: the cluster's GPUs)",
    projects.length === 0
      ? "<p>No GPU was allocated at a sample.</p>"
      : stackedAreaChart("GPUs", timeline.times, projects, axis, [{ name: "cluster GPUs", value: capacity }]),
  );
  const ranked = [...timeline.projectAllocation].sort((a, b) => b.quota - a.quota || peak(b.values) - peak(a.values)).slice(0, 24);
  const quota = figure(
    "quota",
    "Allocation against quota per project: mean and peak GPUs held, and the deserved GPUs (black mark)",
    barsAgainstReference(
      "GPUs",
      ranked.map((p) => p.name),
      [
        { name: "mean held", values: ranked.map((p) => Math.round(mean(p.values) * 10) / 10), color: "#76b7b2" },
        { name: "peak held", values: ranked.map((p) => peak(p.values)), color: "#4e79a7" },
      ],
      { name: "quota", values: ranked.map((p) => p.quota) },
    ),
    timeline.projectAllocation.length > ranked.length
      ? `The ${ranked.length} projects with the largest quotas of ${timeline.projectAllocation.length}.`
      : "",
  );

  const rowWord = timeline.gpusPerRow === 1 ? "GPU" : `run of ${timeline.gpusPerRow} GPUs`;
  const utilisation = figure(
    "utilisation",
    `GPU utilisation (DCGM_FI_DEV_GPU_UTIL, %) per ${rowWord}`,
    heatmapChart(
      timeline.gpuRows.map((r) => r.label),
      ...coarsen(
        timeline.times,
        timeline.gpuRows.map((r) => r.utilisation),
      ),
      axis,
      { min: 0, max: 100, unit: "%", colors: UTILISATION_COLORS },
    ),
    `Grey: no data (the GPU fell off the bus or is resetting, or its node is rebooting). ${
      timeline.gpusPerRow === 1 ? "" : `More than ${MAX_GPU_ROWS} GPUs: each row is the mean of consecutive GPUs.`
    }`,
  );

  const occupancy =
    timeline.gpusPerRow === 1
      ? figure(
          "occupancy",
          "Workloads on each GPU (colour: project)",
          barsOverTimeChart(
            timeline.gpuRows.map((r) => r.label),
            [...projects, { name: "other projects", color: OTHERS_COLOR }]
              .map(({ name, color }) => ({
                name,
                color,
                bars: timeline.occupancy
                  .filter((o) => (projectColor.get(o.project) ?? OTHERS_COLOR) === color)
                  .map((o) => ({ row: o.row, from: o.from, to: o.to, label: o.workload })),
              }))
              .filter((g) => g.bars.length > 0),
            axis,
          ),
        )
      : figure(
          "occupancy",
          "Workloads on each GPU",
          `<p>Drawn for clusters of up to ${MAX_GPU_ROWS} GPUs; this one has ${timeline.gpuRows.length * timeline.gpusPerRow}. The project chart above shows where its GPUs went.</p>`,
        );

  const xidMarks = timeline.moments.flatMap((m) =>
    m.kind === "gpu-fault" && m.node !== undefined ? [{ node: m.node, t: m.t, label: `XID ${m.xid}` }] : [],
  );
  const struck = new Set(xidMarks.map((m) => m.node));
  const shownNodes =
    timeline.nodes.length <= MAX_NODE_ROWS
      ? timeline.nodes
      : timeline.nodes.filter((n) => n.states.some((s) => s !== 0) || struck.has(n.name));
  const nodeIndex = new Map(shownNodes.map((n, i) => [n.name, i]));
  const health = figure(
    "nodes",
    "Node health: state over time, XIDs marked where they struck",
    shownNodes.length === 0
      ? "<p>Every node stayed Ready and no GPU reported an XID.</p>"
      : barsOverTimeChart(
          shownNodes.map((n) => n.name),
          NODE_STATES.map((state, s) => ({
            name: state,
            color: NODE_STATE_COLORS[state],
            bars: shownNodes.flatMap((n, row) => stateRuns(n.states, s, timeline.times, timeline.durationMs).map((r) => ({ row, ...r }))),
          })),
          axis,
          xidMarks.flatMap((m) => (nodeIndex.has(m.node) ? [{ row: nodeIndex.get(m.node) as number, t: m.t, label: m.label }] : [])),
        ),
    timeline.nodes.length > MAX_NODE_ROWS
      ? `Only the ${shownNodes.length} of ${timeline.nodes.length} nodes that were not always Ready or saw an XID.`
      : "",
  );

  const reasons = timeline.backlogByReason.filter((s) => s.values.some((v) => v > 0));
  const waitingReasons = figure(
    "pending",
    "Pods waiting to be scheduled, by the reason the scheduler last gave (stacked)",
    reasons.length === 0
      ? "<p>No pod waited at a sample.</p>"
      : stackedAreaChart(
          "pods",
          timeline.times,
          reasons.map((s) => ({ name: s.name, values: s.values, color: REASON_COLORS[s.name] ?? OTHERS_COLOR })),
          axis,
        ),
    "Unschedulable: no node had the GPUs free; OverLimit: the project's or department's limit; NonPreemptibleOverQuota: a non-preemptible workload beyond its quota; NotYetAttempted: submitted since the last scheduling cycle.",
  );
  const backlogLines = topSeries(timeline.backlog, MAX_PROJECTS);
  const backlog = figure(
    "backlog",
    "Pods waiting to be scheduled per project (stacked)",
    backlogLines.length === 0 ? "<p>No pod waited at a sample.</p>" : stackedAreaChart("pods", timeline.times, backlogLines, axis),
  );

  const types = [...new Set(timeline.waits.map((w) => (w.started ? w.type : "never started")))].sort();
  const bucketOf = (ms: number) => WAIT_BUCKETS.findIndex((b) => ms < b.upToMs);
  const waits = figure(
    "waits",
    "How long workloads waited before they first started, by workload type",
    timeline.waits.length === 0
      ? "<p>No workload was submitted.</p>"
      : histogramChart(
          "workloads",
          WAIT_BUCKETS.map((b) => b.name),
          types.map((type) => {
            const counts = WAIT_BUCKETS.map(() => 0);
            for (const w of timeline.waits)
              if ((w.started ? w.type : "never started") === type) counts[bucketOf(w.waitedMs)] = (counts[bucketOf(w.waitedMs)] ?? 0) + 1;
            return { name: type, counts };
          }),
        ),
    '"never started": still waiting when the run ended, counted at the time they had waited by then.',
  );

  const laneIndex = new Map(LANES.map((l, i) => [l.kind, i]));
  const moments = figure(
    "moments",
    `Failures, evictions, GPU faults and node reboots (${timeline.moments.length})`,
    momentsChart(
      LANES.map((l) => ({ name: `${l.name} (${timeline.moments.filter((m) => m.kind === l.kind).length})`, color: l.color })),
      timeline.moments.map((m) => ({ lane: laneIndex.get(m.kind) as number, t: m.t, label: m.label })),
      axis,
    ),
  );
  const momentList =
    timeline.moments.length === 0
      ? ""
      : `<details><summary>Every moment in words (${timeline.moments.length})</summary><ol class="moments">${timeline.moments
          .map((m) => `<li><time>${new Date(timeline.startUnixMs + m.t).toISOString().slice(0, 19)}Z</time> ${escapeHtml(m.text)}</li>`)
          .join("")}</ol></details>`;

  const title = `gpusynth report — ${timeline.cluster}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
body { font: 14px/1.45 system-ui, sans-serif; margin: 0; padding: 20px 28px; color: #222; background: #fff; }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 28px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
.meta { color: #555; margin: 0 0 12px; }
.headline { display: flex; flex-wrap: wrap; gap: 8px 28px; margin: 8px 0 16px; }
.headline div { min-width: 90px; }
.headline dt { color: #666; font-size: 12px; }
.headline dd { margin: 0; font-size: 22px; font-weight: 600; }
figure.chart { margin: 0 0 20px; }
figcaption { font-weight: 600; margin-bottom: 2px; }
.note { color: #666; margin: 0 0 4px; font-size: 12px; }
figure.chart svg { width: 100%; height: auto; display: block; }
.legend { list-style: none; padding: 0; margin: 4px 0 0 200px; display: flex; flex-wrap: wrap; gap: 4px 16px; }
.swatch { display: inline-block; width: 12px; height: 12px; margin-right: 6px; vertical-align: -1px; }
table { border-collapse: collapse; }
th, td { padding: 3px 10px; border-bottom: 1px solid #ddd; text-align: right; }
th[scope="row"], thead th:first-child { text-align: left; }
ol.moments { font-size: 13px; columns: 2 520px; }
time { color: #666; font-variant-numeric: tabular-nums; }
</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<p class="meta">Offline run of ${formatDuration(timeline.durationMs)} simulated from ${new Date(timeline.startUnixMs).toISOString()} (seed ${timeline.seed}); times in UTC; sampled every ${formatDuration((timeline.times[1] ?? timeline.durationMs) - (timeline.times[0] ?? 0))}.</p>
${headline(timeline)}
<h2>Where the GPUs went</h2>
${perPool}
${perProject}
${quota}
<h2>How busy they were, and who held them</h2>
${utilisation}
${occupancy}
<h2>What broke</h2>
${health}
${moments}
${momentList}
<h2>Who waited, why, and for how long</h2>
${waitingReasons}
${backlog}
${waits}
<h2>Totals per project</h2>
${totalsTable(timeline)}
</body>
</html>
`;
}
