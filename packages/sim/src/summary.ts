/**
 * Per-project and per-node-pool totals of a run, built only from the domain event stream (so
 * it reports what later layers can see, not the simulation's internals).
 */
import type { Blueprint } from "@gpusynth/blueprint";
import { type DomainEvent, unhandledEvent } from "./domain-events.js";

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

interface Open {
  readonly since: number;
  readonly gpus: number;
  readonly project: SummaryRow;
  readonly pool: SummaryRow;
}

export class SummaryCollector {
  private readonly projects = new Map<string, SummaryRow>();
  private readonly pools = new Map<string, SummaryRow>();
  private readonly open = new Map<number, Open>();

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
    switch (event.kind) {
      case "WorkloadSubmitted":
        this.row(this.projects, event.workload.project).submitted++;
        this.row(this.pools, event.nodePools[0] as string).submitted++;
        return;
      case "WorkloadStarted": {
        const project = this.row(this.projects, event.workload.project);
        const pool = this.row(this.pools, event.nodePool);
        if (event.attempt === 1) {
          for (const row of [project, pool]) {
            row.started++;
            row.waits.push(event.waitedMs);
          }
        }
        this.open.set(event.workload.id, { since: event.t, gpus: event.workload.gpus, project, pool });
        return;
      }
      case "WorkloadPreempted":
        this.close(event.workload.id, event.t, "preempted");
        return;
      case "WorkloadCompleted":
        this.close(event.workload.id, event.t, "completed");
        return;
      case "WorkloadFailed":
        this.close(event.workload.id, event.t, "failed");
        return;
      case "WorkloadCancelled":
        if (event.whilePending) this.row(this.projects, event.workload.project).cancelled++;
        else this.close(event.workload.id, event.t, "cancelled");
        return;
      // Kinds this fold ignores, listed so that a new kind is a compile error until decided here.
      case "WorkloadUnschedulable":
      case "GpuFault":
      case "ContainerCrashed":
      case "ContainerRestarted":
      case "NodeMemoryPressure":
      case "NodeMemoryPressureRelieved":
      case "GpuResetStarted":
      case "GpuResetCompleted":
      case "NodeCordoned":
      case "NodeRebootStarted":
      case "NodeReady":
      case "SchedulingCycle":
        return;
      default:
        unhandledEvent(event);
    }
  };

  /** The totals at simulated time `now` (allocations still open count up to now). */
  summary(now: number): Summary {
    const projects = [...this.projects.values()].map((row) => ({ ...row, waits: [...row.waits] }));
    const pools = [...this.pools.values()].map((row) => ({ ...row, waits: [...row.waits] }));
    const byName = (rows: SummaryRow[]) => new Map(rows.map((row) => [row.name, row]));
    const projectRows = byName(projects);
    const poolRows = byName(pools);
    for (const open of this.open.values()) {
      const gpuMs = (now - open.since) * open.gpus;
      (projectRows.get(open.project.name) as SummaryRow).gpuMs += gpuMs;
      (poolRows.get(open.pool.name) as SummaryRow).gpuMs += gpuMs;
    }
    return { durationMs: now, projects, nodePools: pools };
  }

  private close(id: number, t: number, outcome: "preempted" | "completed" | "failed" | "cancelled"): void {
    const open = this.open.get(id);
    if (open === undefined) return;
    this.open.delete(id);
    for (const row of [open.project, open.pool]) {
      row.gpuMs += (t - open.since) * open.gpus;
      row[outcome]++;
    }
  }

  private row(rows: Map<string, SummaryRow>, name: string): SummaryRow {
    let row = rows.get(name);
    if (row === undefined) {
      row = emptyRow(name, 0);
      rows.set(name, row);
    }
    return row;
  }
}

function emptyRow(name: string, gpus: number): SummaryRow {
  return { name, gpus, submitted: 0, started: 0, completed: 0, failed: 0, cancelled: 0, preempted: 0, waits: [], gpuMs: 0 };
}
