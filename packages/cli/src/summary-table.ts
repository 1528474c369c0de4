/** The offline summary as a plain-text table (and as JSON for scripts). */
import { formatDuration } from "@gpusynth/blueprint";
import type { Summary, SummaryRow } from "@gpusynth/sim";

export interface PendingCounts {
  readonly byProject: ReadonlyMap<string, number>;
  readonly byPool: ReadonlyMap<string, number>;
}

function quantile(sorted: readonly number[], q: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

export interface SummaryRecord {
  readonly name: string;
  readonly gpus: number;
  readonly meanAllocatedGpus: number;
  readonly allocatedShare: number | null;
  readonly submitted: number;
  readonly started: number;
  readonly waitMedianMs: number | null;
  readonly waitMeanMs: number | null;
  readonly waitP90Ms: number | null;
  readonly completed: number;
  readonly failed: number;
  readonly cancelled: number;
  readonly preempted: number;
  readonly pendingAtEnd: number;
}

export function summaryRecords(rows: readonly SummaryRow[], durationMs: number, pending: ReadonlyMap<string, number>): SummaryRecord[] {
  return rows.map((row) => {
    const waits = [...row.waits].sort((a, b) => a - b);
    const mean = durationMs > 0 ? row.gpuMs / durationMs : 0;
    return {
      name: row.name,
      gpus: row.gpus,
      meanAllocatedGpus: mean,
      allocatedShare: row.gpus > 0 ? mean / row.gpus : null,
      submitted: row.submitted,
      started: row.started,
      waitMedianMs: quantile(waits, 0.5) ?? null,
      waitMeanMs: waits.length > 0 ? waits.reduce((a, b) => a + b, 0) / waits.length : null,
      waitP90Ms: quantile(waits, 0.9) ?? null,
      completed: row.completed,
      failed: row.failed,
      cancelled: row.cancelled,
      preempted: row.preempted,
      pendingAtEnd: pending.get(row.name) ?? 0,
    };
  });
}

export function summaryJson(summary: Summary, pending: PendingCounts) {
  return {
    simulatedMs: summary.durationMs,
    projects: summaryRecords(summary.projects, summary.durationMs, pending.byProject),
    nodePools: summaryRecords(summary.nodePools, summary.durationMs, pending.byPool),
  };
}

const wait = (ms: number | null) => (ms === null ? "-" : formatDuration(Math.round(ms / 1000) * 1000));

function table(title: string, gpuColumn: string, records: readonly SummaryRecord[]): string {
  const header = [
    title,
    gpuColumn,
    "alloc GPUs",
    "alloc %",
    "submitted",
    "started",
    "wait p50",
    "wait mean",
    "wait p90",
    "completed",
    "failed",
    "cancelled",
    "preempted",
    "pending",
  ];
  const rows = records.map((r) => [
    r.name,
    String(r.gpus),
    r.meanAllocatedGpus.toFixed(1),
    r.allocatedShare === null ? "-" : `${(r.allocatedShare * 100).toFixed(0)}%`,
    String(r.submitted),
    String(r.started),
    wait(r.waitMedianMs),
    wait(r.waitMeanMs),
    wait(r.waitP90Ms),
    String(r.completed),
    String(r.failed),
    String(r.cancelled),
    String(r.preempted),
    String(r.pendingAtEnd),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] as string).length)));
  const line = (cells: readonly string[]) =>
    cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[i] as number) : cell.padStart(widths[i] as number))).join("  ");
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

export function summaryText(summary: Summary, pending: PendingCounts): string {
  const json = summaryJson(summary, pending);
  return [
    `Simulated ${formatDuration(summary.durationMs)}. "alloc GPUs" is the time-weighted mean; waits are submission to first start; "pending" counts workloads still waiting at the end.`,
    "",
    table("project", "deserved", json.projects),
    "",
    table("node pool", "GPUs", json.nodePools),
    "",
  ].join("\n");
}
