/**
 * The KAI-Scheduler container's log, as the collector's filelog receiver with the container
 * operator delivers it. Format and templates from NVIDIA/KAI-Scheduler v0.13.0 (@5d35ecab):
 * pkg/scheduler/log/log.go builds a zap console logger (production config, ISO8601 time,
 * capital coloured level, short caller, stderr) whose encoder turns the sessionID and action
 * fields into a coloured "[<sessionID>] [<action>] " message prefix; each line is
 * ts⇥LEVEL⇥caller⇥message. The scheduler runs a cycle every second (defaultSchedulerPeriod)
 * and logs at --v=3 by default; every pending job is attempted again each cycle.
 * Templates, their V levels and callers: signals/scheduler.md.
 */
import type { CycleAttemptRef, DomainEvent } from "@gpusynth/sim";
import type { LogRecordOut } from "../catalogue.js";
import { queueName } from "../naming.js";
import { stableUuid, unitHash } from "../noise.js";

type Action = "allocate" | "consolidation" | "reclaim" | "preempt" | "stalegangeviction";
const ACTIONS: readonly Action[] = ["allocate", "consolidation", "reclaim", "preempt", "stalegangeviction"];
const TITLE: Readonly<Record<Action, string>> = {
  allocate: "Allocate",
  consolidation: "Consolidation",
  reclaim: "Reclaim",
  preempt: "Preempt",
  stalegangeviction: "StaleGangEviction",
};
/** Callers (ShortCallerEncoder: dir/file.go:line) at @5d35ecab. */
const ENTER_LEAVE: Readonly<Record<Action, [string, string]>> = {
  allocate: ["allocate/allocate.go:47", "allocate/allocate.go:48"],
  consolidation: ["consolidation/consolidation.go:33", "consolidation/consolidation.go:34"],
  reclaim: ["reclaim/reclaim.go:48", "reclaim/reclaim.go:49"],
  preempt: ["preempt/preempt.go:47", "preempt/preempt.go:48"],
  stalegangeviction: ["stalegangeviction/stalegangeviction.go:30", "stalegangeviction/stalegangeviction.go:31"],
};
const THERE_ARE: Readonly<Partial<Record<Action, string>>> = {
  allocate: "allocate/allocate.go:57",
  consolidation: "consolidation/consolidation.go:49",
  reclaim: "reclaim/reclaim.go:58",
  preempt: "preempt/preempt.go:57",
};

const SESSION_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
/** Kubernetes' name-suffix alphabet (apimachinery rand.SafeEncodeString). */
const K8S_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789";

export interface SchedulerLogOptions {
  /** KAI --v; lines above it are not written. */
  readonly verbosity: number;
  readonly schedulingPeriodMs: number;
  /** The scheduler's namespace (KAI's default install namespace). */
  readonly namespace: string;
  /** The scheduler Deployment and container name: <schedulerName>-<shard>. */
  readonly deployment: string;
}

export const SCHEDULER_LOG_DEFAULTS: Omit<SchedulerLogOptions, "verbosity" | "schedulingPeriodMs"> = {
  namespace: "kai-scheduler",
  deployment: "kai-scheduler-default",
};

/** FNV-1a, as log.go colours sessionID and action: code = fnv32a(text) % 8, at least 1. */
function fnv32a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

export function colour(text: string): string {
  const code = Math.max(1, fnv32a(text) % 8);
  return `\u001b[3${code}m${text}\u001b[0m`;
}

const LEVEL_INFO = "\u001b[34mINFO\u001b[0m";
/** The coloured action of the message prefix, fixed per action. */
const ACTION_COLOUR: Readonly<Record<Action, string>> = Object.fromEntries(ACTIONS.map((a) => [a, colour(a)])) as Record<Action, string>;

function pick(alphabet: string, length: number, key: string): string {
  let out = "";
  for (let i = 0; i < length; i++) out += alphabet[Math.floor(unitHash(key, i) * alphabet.length)];
  return out;
}

interface Line {
  readonly v: number;
  readonly caller: string;
  readonly action?: Action;
  readonly msg: string;
}

export class SchedulerLog {
  private lastCycle: (DomainEvent & { kind: "SchedulingCycle" }) | undefined;
  /** Simulated ms of the next cycle not yet written. */
  private nextCycle: number;
  private readonly traced = new Map<number, DomainEvent & { kind: "SchedulingCycle" }>();
  private readonly resource: Record<string, string>;
  /** The same for every line of the file: one shared, read-only object. */
  private readonly attributes: Readonly<Record<string, string>>;

  constructor(
    private readonly startMs: number,
    private readonly clock: (simulatedUnixMs: number) => number,
    private readonly options: SchedulerLogOptions,
  ) {
    this.nextCycle = options.schedulingPeriodMs;
    const pod = `${options.deployment}-${pick(K8S_SUFFIX_ALPHABET, 10, "kai-scheduler/rs")}-${pick(K8S_SUFFIX_ALPHABET, 5, "kai-scheduler/pod")}`;
    const uid = stableUuid(`pod/${pod}`);
    this.resource = {
      "k8s.namespace.name": options.namespace,
      "k8s.pod.name": pod,
      "k8s.pod.uid": uid,
      "k8s.container.name": options.deployment,
      "k8s.container.restart_count": "0",
    };
    this.attributes = Object.freeze({
      "log.iostream": "stderr",
      logtag: "F",
      "log.file.path": `/var/log/pods/${options.namespace}_${pod}_${uid}/${options.deployment}/0.log`,
      "log.file.name": "0.log",
    });
  }

  /** Feeds a domain event: the cycles the simulation ran. */
  readonly record = (event: DomainEvent): void => {
    if (event.kind === "SchedulingCycle") this.traced.set(event.t, event);
  };

  /** The log lines of every cycle up to simulated time `t` (ms), as filelog records. */
  drain(t: number): LogRecordOut[] {
    const out: LogRecordOut[] = [];
    const period = this.options.schedulingPeriodMs;
    for (; this.nextCycle <= t; this.nextCycle += period) {
      const cycle = this.traced.get(this.nextCycle);
      if (cycle !== undefined) {
        this.traced.delete(this.nextCycle);
        this.lastCycle = cycle;
      }
      this.writeCycle(out, this.nextCycle, cycle ?? this.idleCycle());
    }
    return out;
  }

  /**
   * Writes nothing for the cycles up to simulated time `t` (a warm-up nobody reads), keeping
   * what later cycles repeat.
   */
  skip(t: number): void {
    const period = this.options.schedulingPeriodMs;
    for (; this.nextCycle <= t; this.nextCycle += period) {
      const cycle = this.traced.get(this.nextCycle);
      if (cycle === undefined) continue;
      this.traced.delete(this.nextCycle);
      this.lastCycle = cycle;
    }
  }

  /** A cycle in which nothing changed: the jobs still pending are attempted and fail again. */
  private idleCycle(): DomainEvent & { kind: "SchedulingCycle" } {
    const last = this.lastCycle;
    if (last === undefined)
      return { t: 0, kind: "SchedulingCycle", jobs: 0, pendingJobs: 0, queues: 0, nodes: 0, allocate: [], reclaim: [], preempt: [] };
    const failed = (list: readonly CycleAttemptRef[]) =>
      list.filter((a) => a.outcome !== "allocated" && a.outcome !== "reclaimed" && a.outcome !== "preempted");
    const allocate = failed(last.allocate);
    return { ...last, pendingJobs: allocate.length, allocate, reclaim: failed(last.reclaim), preempt: failed(last.preempt) };
  }

  private writeCycle(out: LogRecordOut[], t: number, cycle: DomainEvent & { kind: "SchedulingCycle" }): void {
    const session = pick(SESSION_ALPHABET, 6, `session/${t}`);
    const lines: Line[] = [
      { v: 1, caller: "scheduler/scheduler.go:116", msg: "Start scheduling ..." },
      {
        v: 2,
        caller: "framework/session.go:361",
        msg: `Session ${stableUuid(`session/${t}`)} with <${cycle.jobs}> Jobs, <${cycle.queues}> Queues and <${cycle.nodes}> Nodes`,
      },
    ];
    let remaining = cycle.pendingJobs;
    for (const action of ACTIONS) {
      const [enter, leave] = ENTER_LEAVE[action];
      lines.push({ v: 2, caller: enter, action, msg: `Enter ${TITLE[action]} ...` });
      const thereAre = THERE_ARE[action];
      if (thereAre !== undefined)
        lines.push({
          v: 2,
          caller: thereAre,
          action,
          msg: `There are <${remaining}> PodGroupInfos and <${cycle.queues}> Queues in total for scheduling`,
        });
      if (action === "allocate") {
        for (const a of cycle.allocate) lines.push(...attemptLines(a, allocateLines));
        remaining = cycle.allocate.filter((a) => a.outcome !== "allocated").length;
      } else if (action === "reclaim") {
        for (const a of cycle.reclaim) lines.push(...attemptLines(a, reclaimLines));
        remaining -= cycle.reclaim.filter((a) => a.outcome === "reclaimed").length;
      } else if (action === "preempt") {
        for (const a of cycle.preempt) lines.push(...attemptLines(a, preemptLines));
      }
      lines.push({ v: 2, caller: leave, action, msg: `Leaving ${TITLE[action]} ...` });
    }
    lines.push({ v: 1, caller: "scheduler/scheduler.go:118", msg: "End scheduling ..." });

    const timeMs = this.clock(this.startMs + t);
    const ts = new Date(timeMs).toISOString();
    const sid = colour(session);
    const plain = `[${sid}] `;
    for (const line of lines) {
      if (line.v > this.options.verbosity) continue;
      const prefix = line.action === undefined ? plain : `${plain}[${ACTION_COLOUR[line.action]}] `;
      out.push({
        area: "scheduler",
        receiver: "filelog",
        resource: this.resource,
        timeMs,
        body: `${ts}\t${LEVEL_INFO}\t${line.caller}\t${prefix}${line.msg}`,
        attributes: this.attributes,
      });
    }
  }
}

/**
 * An attempt's lines, written once: a job still pending is attempted again every cycle with the
 * same words (the idle cycles reuse the attempt records), so its lines are kept with the record.
 */
const attemptLineCache = new WeakMap<CycleAttemptRef, readonly Line[]>();
function attemptLines(a: CycleAttemptRef, write: (a: CycleAttemptRef) => Line[]): readonly Line[] {
  let lines = attemptLineCache.get(a);
  if (lines === undefined) {
    lines = write(a);
    attemptLineCache.set(a, lines);
  }
  return lines;
}

const job = (a: CycleAttemptRef) => `<${a.workload.namespace}/${a.podGroup}>`;
/** How a job's resources print in the templates' `resources: <%v>`: a modelled rendering (cantfind.md). */
const resources = (a: CycleAttemptRef) => `<GPU: ${a.workload.gpus}>`;
const tasks = (a: CycleAttemptRef) => `<[${a.victims.flatMap((v) => v.pods.map((p) => `${v.workload.namespace}/${p.name}`)).join(" ")}]>`;

function allocateLines(a: CycleAttemptRef): Line[] {
  const queue = queueName({ name: a.queue, pool: a.nodePool });
  const lines: Line[] = [
    {
      v: 3,
      caller: "allocate/allocate.go:83",
      action: "allocate",
      msg: `Attempting to allocate job: ${job(a)} of queue <${queue}>, resources: ${resources(a)}`,
    },
  ];
  if (a.outcome === "allocated") {
    lines.push(...bindLines(a, "allocate"));
    lines.push({ v: 3, caller: "allocate/allocate.go:106", action: "allocate", msg: `Succesfully allocated resources for job: ${job(a)}` });
  } else {
    lines.push({
      v: 3,
      caller: "allocate/allocate.go:88",
      action: "allocate",
      msg: `Could not allocate resources for job: ${job(a)} of queue <${queue}>`,
    });
  }
  return lines;
}

function reclaimLines(a: CycleAttemptRef): Line[] {
  const queue = queueName({ name: a.queue, pool: a.nodePool });
  const lines: Line[] = [
    {
      v: 3,
      caller: "reclaim/reclaim.go:107",
      action: "reclaim",
      msg: `Attempting to reclaim for job: ${job(a)} of queue <${queue}>, resources: ${resources(a)}`,
    },
  ];
  if (a.outcome === "reclaimed") {
    lines.push({
      v: 3,
      caller: "reclaim/reclaim.go:88",
      action: "reclaim",
      msg: `Reclaimed resources for job ${job(a)}, evicting reclaimee tasks: ${tasks(a)}.`,
    });
  } else {
    lines.push({ v: 3, caller: "reclaim/reclaim.go:95", action: "reclaim", msg: `Didn't find a reclaim strategy for job ${job(a)}` });
  }
  return lines;
}

function preemptLines(a: CycleAttemptRef): Line[] {
  const queue = queueName({ name: a.queue, pool: a.nodePool });
  const lines: Line[] = [
    {
      v: 3,
      caller: "preempt/preempt.go:104",
      action: "preempt",
      msg: `Attempting to preempt for job: ${job(a)}, priority: <${a.workload.priority}>, queue: <${queue}>, resources: ${resources(a)}`,
    },
  ];
  if (a.outcome === "preempted")
    lines.push({
      v: 3,
      caller: "preempt/preempt.go:86",
      action: "preempt",
      msg: `Successfully preempted for job ${job(a)}, preempted tasks: ${tasks(a)}`,
    });
  else if (a.outcome === "over-quota")
    lines.push({
      v: 3,
      caller: "preempt/preempt.go:109",
      action: "preempt",
      msg: `Job ${job(a)} would have placed the queue resources over quota`,
    });
  else lines.push({ v: 3, caller: "preempt/preempt.go:92", action: "preempt", msg: `Didn't find a preemption strategy for job ${job(a)}` });
  return lines;
}

/** cache.go Bind: one bind request per task; whole GPUs use no GPU group. */
function bindLines(a: CycleAttemptRef, action: Action): Line[] {
  return a.pods.map((pod) => ({
    v: 3,
    caller: "cache/cache.go:273",
    action,
    msg: `Creating bind request for task <${a.workload.namespace}/${pod.name}> to node <${pod.node}> gpuGroup: <>, requires: <${pod.gpus.length}> GPUs`,
  }));
}
