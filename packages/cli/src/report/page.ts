/**
 * The report page: one self-contained HTML document (inline CSS and SVG, nothing fetched) with
 * GPU allocation per node pool, the backlog per project, the failures and preemptions on one
 * timeline, and the run's totals per project.
 */
import { formatDuration } from "@gpusynth/blueprint";
import { escapeHtml, type Mark, momentsChart, PALETTE, stepChart } from "./charts.js";
import type { ChartSeries, MomentKind, Timeline } from "./timeline.js";

/** Projects drawn one by one in the backlog chart; the rest are summed into one line. */
const MAX_BACKLOG_LINES = PALETTE.length - 1;

const LANES: ReadonlyArray<{ kind: MomentKind; name: string; color: string }> = [
  { kind: "failed", name: "workload failed", color: "#e15759" },
  { kind: "evicted", name: "workload evicted (reclaim or preempt)", color: "#f28e2b" },
  { kind: "gpu-fault", name: "GPU fault (XID)", color: "#b07aa1" },
  { kind: "node-reboot", name: "node reboot", color: "#4e79a7" },
];

/** The projects with the largest backlog peaks, and one line for all the others. */
function backlogLines(backlog: readonly ChartSeries[]): ChartSeries[] {
  const ranked = [...backlog].filter((s) => s.values.some((v) => v > 0)).sort((a, b) => Math.max(...b.values) - Math.max(...a.values));
  if (ranked.length <= MAX_BACKLOG_LINES + 1) return ranked;
  const rest = ranked.slice(MAX_BACKLOG_LINES);
  const others = (rest[0] as ChartSeries).values.map((_, i) => rest.reduce((sum, s) => sum + (s.values[i] ?? 0), 0));
  return [...ranked.slice(0, MAX_BACKLOG_LINES), { name: `${rest.length} other projects`, values: others }];
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

export function reportPage(timeline: Timeline): string {
  const axis = { startUnixMs: timeline.startUnixMs, durationMs: timeline.durationMs };
  const allocation = stepChart(
    "allocation",
    "GPUs allocated per node pool (dashed: the pool's GPUs)",
    "GPUs",
    timeline.times,
    timeline.allocation.map((s, i) => ({ ...s, ceiling: s.capacity, color: PALETTE[i % PALETTE.length] as string })),
    axis,
  );
  const lines = backlogLines(timeline.backlog);
  const backlog =
    lines.length === 0
      ? `<figure class="chart" id="backlog"><figcaption>Pods waiting to be scheduled per project</figcaption><p>No pod waited at a sample.</p></figure>`
      : stepChart(
          "backlog",
          "Pods waiting to be scheduled per project",
          "pods",
          timeline.times,
          lines.map((s, i) => ({ ...s, color: PALETTE[i % PALETTE.length] as string })),
          axis,
        );
  const laneName = new Map(LANES.map((l) => [l.kind, l.name]));
  const marks: Mark[] = timeline.moments.map((m) => ({ t: m.t, lane: laneName.get(m.kind) as string, text: m.text }));
  const moments = momentsChart("moments", "Failures, evictions, GPU faults and node reboots", LANES, marks, axis);
  const title = `gpusynth report — ${timeline.cluster}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>${escapeHtml(title)}</title>
<style>
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; background: #fff; }
h1 { font-size: 20px; margin: 0 0 4px; }
.meta { color: #555; margin: 0 0 16px; }
figure.chart { margin: 0 0 24px; }
figcaption { font-weight: 600; margin-bottom: 4px; }
svg text { font-size: 11px; fill: #555; }
svg .grid { stroke: #e6e6e6; shape-rendering: crispEdges; }
svg .lane { fill: #333; }
.legend { list-style: none; padding: 0; margin: 4px 0 0 56px; display: flex; flex-wrap: wrap; gap: 4px 16px; }
.swatch { display: inline-block; width: 12px; height: 12px; margin-right: 6px; vertical-align: -1px; }
table { border-collapse: collapse; }
th, td { padding: 3px 10px; border-bottom: 1px solid #ddd; text-align: right; }
th[scope="row"], thead th:first-child { text-align: left; }
</style>
</head>
<body>
<h1>${escapeHtml(title)}</h1>
<p class="meta">Offline run of ${formatDuration(timeline.durationMs)} simulated from ${new Date(timeline.startUnixMs).toISOString()} (seed ${timeline.seed}); times in UTC; series sampled every ${formatDuration(timeline.times[1] ?? timeline.durationMs)}. Hover a marker or a line for details.</p>
${allocation}
${backlog}
${moments}
<h2>Totals per project</h2>
${totalsTable(timeline)}
</body>
</html>
`;
}
