/**
 * Per-project and per-node-pool totals of a run, from the workload records of the domain event
 * stream (so it reports what later layers can see, not the simulation's internals).
 */
import type { Blueprint } from "@gpusynth/blueprint";
import type { DomainEvent } from "./domain-events.js";
import { firstRun, WorkloadLedger, type WorkloadRecord } from "./workload-ledger.js";

export interface SummaryRow {
  readonly name: string;
  /** GPUs the row is entitled to (deserved quota for a project, capacity for a pool). */
  readonly gpus: number;
  submitted: number;
  started: number;
  completed: number;
  failed: number;
  cancelled: number;
  preempted: number;
  /** Waits of first starts, in ms. */
  readonly waits: number[];
  /** GPU-milliseconds allocated. */
  gpuMs: number;
}

export interface Summary {
  readonly durationMs: number;
  readonly projects: readonly SummaryRow[];
  readonly nodePools: readonly SummaryRow[];
}

/** Ended workloads are tallied and forgotten every this many events, so memory stays flat. */
const FORGET_EVERY_EVENTS = 4096;

export class SummaryCollector {
  private readonly projects = new Map<string, SummaryRow>();
  private readonly pools = new Map<string, SummaryRow>();
  private readonly ledger = new WorkloadLedger({ retentionMs: 0, onForget: (w) => tally(w, Number.NaN, this.projects, this.pools) });
  private events = 0;

  /** Rows for the blueprint's projects (deserved GPUs over all pools) and node pools (capacity). */
  static forBlueprint(blueprint: Blueprint): SummaryCollector {
    return new SummaryCollector(
      blueprint.projects.map((p) => ({ name: p.name, gpus: Object.values(p.nodePools).reduce((sum, q) => sum + q.deserved, 0) })),
      blueprint.nodePools.map((p) => ({ name: p.name, gpus: p.nodes * p.gpusPerNode })),
    );
  }

  constructor(projects: ReadonlyArray<{ name: string; gpus: number }>, pools: ReadonlyArray<{ name: string; gpus: number }>) {
    for (const p of projects) this.projects.set(p.name, emptyRow(p.name, p.gpus));
    for (const p of pools) this.pools.set(p.name, emptyRow(p.name, p.gpus));
  }

  readonly record = (event: DomainEvent): void => {
    this.ledger.record(event);
    if (++this.events % FORGET_EVERY_EVENTS === 0) this.ledger.forgetEnded(event.t);
  };

  /** The totals at simulated time `now` (allocations still open count up to now). */
  summary(now: number): Summary {
    const copy = (rows: Map<string, SummaryRow>) => new Map([...rows].map(([name, row]) => [name, { ...row, waits: [...row.waits] }]));
    const projects = copy(this.projects);
    const pools = copy(this.pools);
    for (const w of this.ledger.workloads()) tally(w, now, projects, pools);
    return { durationMs: now, projects: [...projects.values()], nodePools: [...pools.values()] };
  }
}

/**
 * Adds one workload to the rows: submitted in its project and first requested pool; started,
 * with its wait, where it first ran; each run's GPU time and how it ended where it ran (a
 * workload cancelled while pending counts in its project only). Runs still open count up to `now`.
 */
function tally(w: WorkloadRecord, now: number, projects: Map<string, SummaryRow>, pools: Map<string, SummaryRow>): void {
  const project = rowOf(projects, w.ref.project);
  project.submitted++;
  rowOf(pools, w.requestedNodePools[0] as string).submitted++;
  const first = firstRun(w);
  if (first !== undefined) {
    for (const row of [project, rowOf(pools, first.pool)]) {
      row.started++;
      row.waits.push(first.startedAt - w.submittedAt);
    }
  }
  for (const run of w.runs) {
    const pool = rowOf(pools, run.pool);
    const gpuMs = ((run.endedAt ?? now) - run.startedAt) * run.gpus;
    for (const row of [project, pool]) {
      row.gpuMs += gpuMs;
      if (run.endedBy !== null) row[run.endedBy]++;
    }
  }
  if (w.ending === "cancelled" && w.runs.at(-1)?.endedBy !== "cancelled") project.cancelled++;
}

function rowOf(rows: Map<string, SummaryRow>, name: string): SummaryRow {
  let row = rows.get(name);
  if (row === undefined) {
    row = emptyRow(name, 0);
    rows.set(name, row);
  }
  return row;
}

function emptyRow(name: string, gpus: number): SummaryRow {
  return { name, gpus, submitted: 0, started: 0, completed: 0, failed: 0, cancelled: 0, preempted: 0, waits: [], gpuMs: 0 };
}
