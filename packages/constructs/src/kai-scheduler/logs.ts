/**
 * The KAI-Scheduler container's log, as the collector's filelog receiver with the container
 * operator delivers it. Format and templates from NVIDIA/KAI-Scheduler v0.13.0 (@5d35ecab):
 * pkg/scheduler/log/log.go builds a zap console logger (production config, ISO8601 time,
 * capital coloured level, short caller, stderr) whose encoder turns the sessionID and action
 * fields into a coloured "[<sessionID>] [<action>] " message prefix; each line is
 * ts⇥LEVEL⇥caller⇥message. The scheduler runs a cycle a period after the last one ended
 * (wait.Until, sliding: cycles drift within the second by their own duration) and logs at
 * --v=3 by default; every pending job is attempted again each cycle. Values print as KAI's
 * String() methods print them. Templates, their V levels and callers: signals/kai-scheduler.md.
 */
import {
  type CycleAttemptRef,
  type DomainEvent,
  idleCycleAfter,
  KUBELET_MAX_PODS,
  type NodeResources,
  type QueueDivision,
} from "@gpusynth/sim";
import type { LogRecordOut } from "../catalogue.js";
import type { StampClock } from "../clock.js";
import { queueName } from "../naming.js";
import { hashOn, hashState, mixed, stableChars } from "../noise.js";
import { cycleLatencyMs } from "./latency.js";
import { humanize, requirementsText, resourceText } from "./values.js";

type Action = "allocate" | "consolidation" | "reclaim" | "preempt" | "stalegangeviction";
const ACTIONS: readonly Action[] = ["allocate", "consolidation", "reclaim", "preempt", "stalegangeviction"];
const TITLE: Readonly<Record<Action, string>> = {
  allocate: "Allocate",
  consolidation: "Consolidation",
  reclaim: "Reclaim",
  preempt: "Preempt",
  stalegangeviction: "StaleGangEviction",
};
/**
 * Callers (ShortCallerEncoder: dir/file.go:line) at @5d35ecab. "Leaving" is a deferred call:
 * zap reports the line the function returns from (its closing brace).
 */
const ENTER_LEAVE: Readonly<Record<Action, [string, string]>> = {
  allocate: ["allocate/allocate.go:47", "allocate/allocate.go:77"],
  consolidation: ["consolidation/consolidation.go:33", "consolidation/consolidation.go:78"],
  reclaim: ["reclaim/reclaim.go:48", "reclaim/reclaim.go:100"],
  preempt: ["preempt/preempt.go:47", "preempt/preempt.go:97"],
  stalegangeviction: ["stalegangeviction/stalegangeviction.go:30", "stalegangeviction/stalegangeviction.go:39"],
};
const THERE_ARE: Readonly<Partial<Record<Action, string>>> = {
  allocate: "allocate/allocate.go:57",
  consolidation: "consolidation/consolidation.go:49",
  reclaim: "reclaim/reclaim.go:58",
  preempt: "preempt/preempt.go:57",
};

const SESSION_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";

/** The lines every cycle writes with the same words, made once. */
const START_LINE: Line = { v: 1, caller: "scheduler/scheduler.go:116", msg: "Start scheduling ..." };
const SNAPSHOT_LINE: Line = { v: 2, caller: "framework/session.go:353", msg: "Taking cluster snapshot ..." };
const SNAPSHOT_PLUGIN_LINE: Line = { v: 3, caller: "snapshot/snapshot.go:78", msg: "Snapshot plugin registering get-snapshot" };
const END_LINE: Line = { v: 1, caller: "scheduler/scheduler.go:138", msg: "End scheduling ..." };
const ENTER_LINE = perAction((action): Line => ({ v: 2, caller: ENTER_LEAVE[action][0], action, msg: `Enter ${TITLE[action]} ...` }));
const LEAVE_LINE = perAction((action): Line => ({ v: 2, caller: ENTER_LEAVE[action][1], action, msg: `Leaving ${TITLE[action]} ...` }));

/** A value for each action. */
function perAction<T>(make: (action: Action) => T): Readonly<Record<Action, T>> {
  return {
    allocate: make("allocate"),
    consolidation: make("consolidation"),
    reclaim: make("reclaim"),
    preempt: make("preempt"),
    stalegangeviction: make("stalegangeviction"),
  };
}

export interface SchedulerLogOptions {
  /** KAI --v; lines above it are not written. */
  readonly verbosity: number;
  readonly schedulingPeriodMs: number;
  /** The scheduler's pod and container (its Deployment <schedulerName>-<shard> in KAI's install namespace: system-workloads.ts). */
  readonly pod: { readonly namespace: string; readonly name: string; readonly uid: string; readonly container: string };
  /**
   * Count lines instead of writing them (tallied()), for a tally of what is emitted (an
   * inventory), which needs the file's fields — every line carries the same resource and
   * attributes — and the number of lines, not their text: the first cycle is written whole, but
   * for its per-queue "Resource division result" lines (one a queue, ten times the rest of a large
   * cluster's log), and every later line is counted. Building the lines' text and records was a
   * fifth of check-signals' CPU on platform and enterprise (46.7 → 36.9 s).
   */
  readonly tally?: boolean;
}

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

/** zap's CapitalColorLevelEncoder (log.go:174): INFO blue, WARN yellow. */
const LEVEL_INFO = "\u001b[34mINFO\u001b[0m";
const LEVEL_WARN = "\u001b[33mWARN\u001b[0m";
/** The coloured action of the message prefix, fixed per action. */
const ACTION_COLOUR = perAction(colour);

interface Line {
  readonly v: number;
  /** Info unless said. */
  readonly level?: "warn";
  readonly caller: string;
  readonly action?: Action;
  readonly msg: string;
}

type Cycle = DomainEvent & { kind: "SchedulingCycle" };

interface CycleTiming {
  readonly startMs: number;
  readonly durationMs: number;
  readonly nextDriftMs: number;
}

export class SchedulerLog {
  private lastCycle: Cycle | undefined;
  /** Simulated ms of the next cycle not yet written. */
  private nextCycle: number;
  private readonly traced = new Map<number, Cycle>();
  private readonly resource: Record<string, string>;
  /** The same for every line of the file: one shared, read-only object. */
  private readonly attributes: Readonly<Record<string, string>>;

  constructor(
    private readonly startMs: number,
    private readonly clock: StampClock,
    private readonly options: SchedulerLogOptions,
  ) {
    this.nextCycle = options.schedulingPeriodMs;
    const { namespace, name: pod, uid, container } = options.pod;
    this.resource = {
      "k8s.namespace.name": namespace,
      "k8s.pod.name": pod,
      "k8s.pod.uid": uid,
      "k8s.container.name": container,
      "k8s.container.restart_count": "0",
    };
    // As the Helm chart's logsCollection preset configures filelog: the file's path, not its
    // name (include_file_name: false).
    this.attributes = Object.freeze({
      "log.iostream": "stderr",
      logtag: "F",
      "log.file.path": `/var/log/pods/${namespace}_${pod}_${uid}/${container}/0.log`,
    });
  }

  /** Lines counted, not written, since the last call (options.tally). */
  tallied(): number {
    const n = this.tallyCount;
    this.tallyCount = 0;
    return n;
  }
  private tallyCount = 0;
  /** A cycle has been written whole (options.tally: the lines after it are counted). */
  private wroteWhole = false;
  /** Once counted (options.tally), the lines of each cycle, the division's included. */
  private readonly countedLines = new WeakMap<Cycle, number>();

  /** Feeds a domain event: the cycles the simulation ran. */
  readonly record = (event: DomainEvent): void => {
    if (event.kind === "SchedulingCycle") this.traced.set(event.t, event);
  };

  /** The log lines of every cycle up to simulated time `t` (ms), as filelog records. */
  drain(t: number): LogRecordOut[] {
    const out: LogRecordOut[] = [];
    const period = this.options.schedulingPeriodMs;
    // A cycle is written once it has ended: its lines run past its period boundary by the drift
    // and its own duration, and nothing is stamped later than `t`.
    for (; this.nextCycle <= t; this.nextCycle += period) {
      const cycle = this.traced.get(this.nextCycle) ?? this.idleCycle();
      if (cycle === undefined) continue; // before the scheduler's first cycle
      const timing = this.timing(this.nextCycle, cycle);
      if (timing.startMs + timing.durationMs > t) break;
      if (this.traced.delete(this.nextCycle)) this.lastCycle = cycle;
      this.driftMs = timing.nextDriftMs;
      this.writeCycle(out, cycle, timing);
    }
    return out;
  }

  /**
   * Writes nothing for the cycles whose lines have all been written by simulated time `t` (a
   * warm-up nobody reads), keeping what later cycles repeat. A cycle still running at `t` is left
   * for the next drain, as drain leaves it: a stretch skipped and then read writes what a run read
   * throughout writes after it.
   */
  skip(t: number): void {
    const period = this.options.schedulingPeriodMs;
    for (; this.nextCycle <= t; this.nextCycle += period) {
      const cycle = this.traced.get(this.nextCycle);
      // The drift goes on whether or not anyone reads the lines.
      const ran = cycle ?? this.idleCycle();
      if (ran !== undefined) {
        const timing = this.timing(this.nextCycle, ran);
        if (timing.startMs + timing.durationMs > t) break;
        this.driftMs = timing.nextDriftMs;
      }
      if (cycle !== undefined) {
        this.traced.delete(this.nextCycle);
        this.lastCycle = cycle;
      }
    }
  }

  /**
   * A cycle in which nothing changed (sim's idleCycleAfter): the jobs still pending are attempted
   * again. The same for every idle cycle after one that ran, so it is worked out once per cycle
   * that ran.
   */
  private idleCycle(): Cycle | undefined {
    const last = this.lastCycle;
    if (last === undefined) return undefined;
    if (this.idle?.after === last) return this.idle.cycle;
    const cycle = idleCycleAfter(last);
    this.idle = { after: last, cycle };
    return cycle;
  }
  private idle: { readonly after: Cycle; readonly cycle: Cycle } | undefined;

  /** ISO 8601 with milliseconds (zap's ISO8601TimeEncoder in UTC), formatting each second once. */
  private timestamp(timeMs: number): string {
    const second = Math.floor(timeMs / 1000);
    // Milliseconds, truncated: a live run's stamps divide simulated time by the speed and carry
    // fractions of a millisecond that zap's layout does not print.
    const ms = Math.floor(timeMs - second * 1000);
    // A cycle's lines come a few to a millisecond: the last stamp serves the next.
    if (second !== this.stampSecond) this.isoPrefix = new Date(second * 1000).toISOString().slice(0, 20);
    else if (ms === this.stampMs) return this.stamp;
    this.stampSecond = second;
    this.stampMs = ms;
    this.stamp = `${this.isoPrefix}${String(ms).padStart(3, "0")}Z`;
    return this.stamp;
  }
  /** The second and millisecond of the last stamp, the second's text, and the stamp. */
  private stampSecond = Number.NaN;
  private stampMs = Number.NaN;
  private isoPrefix = "";
  private stamp = "";

  /** When the cycle of period boundary `t` starts (simulated ms), how long it runs, and the drift after it. */
  private timing(t: number, cycle: Cycle): CycleTiming {
    const durationMs = cycleLatencyMs(cycle.pendingJobs, cycle.jobs - cycle.pendingJobs, t);
    return { startMs: t + this.driftMs, durationMs, nextDriftMs: (this.driftMs + durationMs) % this.options.schedulingPeriodMs };
  }
  /** How far the loop has drifted into the period (the sum of cycle times, modulo the period). */
  private driftMs = 0;

  private writeCycle(out: LogRecordOut[], cycle: Cycle, { startMs, durationMs }: CycleTiming): void {
    // Counting only: an idle cycle repeats the one before it (idleCycle), and so does its count.
    const counted = this.wroteWhole ? this.countedLines.get(cycle) : undefined;
    if (counted !== undefined) {
      this.tallyCount += counted;
      return;
    }
    const session = stableChars(SESSION_ALPHABET, 6, `session/${startMs}`);
    const lines: Line[] = [
      START_LINE,
      SNAPSHOT_LINE,
      // The snapshot builds each node's info (cluster_info.go:245), warning of a GPU count that differs.
      ...cycle.gpuShortNodes.map(gpuShortLine),
      {
        v: 2,
        caller: "framework/session.go:361",
        msg: `Session ${session} with <${cycle.jobs}> Jobs, <${cycle.queues}> Queues and <${cycle.nodes}> Nodes`,
      },
    ];
    // The proportion plugin opens next: nodes it leaves out, then the cluster's total.
    for (const node of cycle.notReadyNodes)
      lines.push({
        v: 2,
        caller: "proportion/proportion.go:262",
        msg: `Node <${node}> is not ready, not counting resource for proportion calculations`,
      });
    const { cpuMilli, memoryBytes, gpus } = cycle.allocatable;
    lines.push({
      v: 3,
      caller: "proportion/proportion.go:248",
      msg: `Total allocatable resources are <${resourceText(cpuMilli, memoryBytes, gpus)}>, number of nodes: <${cycle.nodes}>, number of queues: <${cycle.queues}>`,
    });
    // Then it divides the resources among the queues, logging each queue's result.
    const divisionTallied = this.options.tally === true && this.options.verbosity >= DIVISION_V ? cycle.division.length : 0;
    this.tallyCount += divisionTallied;
    if (this.options.tally !== true) for (const entry of divisionOrder(cycle.division, session)) lines.push(divisionLine(entry));
    lines.push(SNAPSHOT_PLUGIN_LINE);

    for (const line of actionLines(cycle)) lines.push(line);
    lines.push(END_LINE);

    const plain = `[${colour(session)}] `;
    // The message prefix per action, made once a cycle: "[session] [action] ".
    const prefixes = new Map<Action, string>();
    const prefixOf = (action: Action | undefined): string => {
      if (action === undefined) return plain;
      let prefix = prefixes.get(action);
      if (prefix === undefined) {
        prefix = `${plain}[${ACTION_COLOUR[action]}] `;
        prefixes.set(action, prefix);
      }
      return prefix;
    };
    const verbosity = this.options.verbosity;
    let written = 0;
    for (const line of lines) if (line.v <= verbosity) written++;
    if (this.options.tally === true && this.wroteWhole) {
      this.tallyCount += written;
      // What the cycle's lines number depends on the cycle alone (its session and times change only their text).
      this.countedLines.set(cycle, divisionTallied + written);
      return;
    }
    this.wroteWhole = true;
    // The lines spread over the cycle's duration, the last one ("End scheduling") at its end.
    const step = written > 1 ? durationMs / (written - 1) : 0;
    let i = 0;
    for (const line of lines) {
      if (line.v > verbosity) continue;
      const timeMs = this.clock(this.startMs + Math.floor(startMs + i * step));
      i++;
      const parts = lineParts(line);
      out.push({
        area: "kai-scheduler",
        receiver: "filelog",
        resource: this.resource,
        timeMs,
        body: `${this.timestamp(timeMs)}${parts.head}${prefixOf(line.action)}${parts.text}`,
        attributes: this.attributes,
      });
    }
  }
}

/**
 * The line as filelog delivers it: its fileconsumer trims whitespace off the end of every line
 * it reads (pkg/stanza trim.Trailing, on by default: preserve_trailing_whitespaces false, at
 * v0.160.0), and some of KAI's messages end in a space (proportion's "Resource division
 * result", resource_division.go:64).
 */
function trimTrailing(text: string): string {
  let end = text.length;
  for (let c = text.charCodeAt(end - 1); c === 32 || c === 9 || c === 13 || c === 10; c = text.charCodeAt(--end - 1));
  return end === text.length ? text : text.slice(0, end);
}

/**
 * A cycle's actions' lines, from entering allocate to leaving stale gang eviction: they depend on
 * the cycle alone (its session and times change only their records' text), so an idle cycle,
 * repeated every period until something changes, makes them once.
 */
function actionLines(cycle: Cycle): readonly Line[] {
  let lines = actionLinesOf.get(cycle);
  if (lines !== undefined) return lines;
  lines = [];
  const afterAllocate = cycle.allocate.filter((a) => a.outcome !== "allocated" && a.outcome !== "pipelined").length;
  const reclaimed = cycle.reclaim.filter((a) => a.outcome === "reclaimed").length;
  const jobsIn: Readonly<Record<Action, number>> = {
    allocate: cycle.pendingJobs,
    consolidation: cycle.consolidation.length,
    reclaim: afterAllocate,
    preempt: afterAllocate - reclaimed,
    stalegangeviction: 0,
  };
  const attempts: Readonly<Record<Action, ReadonlyArray<readonly Line[]>>> = {
    allocate: cycle.allocate.map((a) => attemptLines(a, allocateLines)),
    consolidation: cycle.consolidation.map((a) => attemptLines(a, consolidationLines)),
    reclaim: cycle.reclaim.map((a) => attemptLines(a, reclaimLines)),
    preempt: cycle.preempt.map((a) => attemptLines(a, preemptLines)),
    stalegangeviction: (cycle.staleGangEviction ?? []).map(({ workload, pods }) =>
      pods.map(
        (pod): Line => ({
          v: 3,
          caller: "stalegangeviction/stalegangeviction.go:80",
          action: "stalegangeviction",
          msg: `Evicted task: <${workload.namespace}/${pod.name}> due its job being a stale job, its status: <Running>`,
        }),
      ),
    ),
  };
  for (const action of ACTIONS) {
    lines.push(ENTER_LINE[action]);
    const thereAre = THERE_ARE[action];
    if (thereAre !== undefined)
      lines.push({
        v: 2,
        caller: thereAre,
        action,
        msg: `There are <${jobsIn[action]}> PodGroupInfos and <${cycle.leafQueues}> Queues in total for scheduling`,
      });
    for (const attempt of attempts[action]) lines.push(...attempt);
    lines.push(LEAVE_LINE[action]);
  }
  actionLinesOf.set(cycle, lines);
  return lines;
}
const actionLinesOf = new WeakMap<Cycle, Line[]>();

/**
 * What a line's record says around the cycle's prefix, made once per line (most lines are kept
 * with what they report and written again cycle after cycle): its level and caller between tabs
 * before it, its message as filelog delivers it (trimTrailing) after it.
 */
function lineParts(line: Line): LineParts {
  let parts = linePartsOf.get(line);
  if (parts === undefined) {
    parts = { head: `\t${line.level === "warn" ? LEVEL_WARN : LEVEL_INFO}\t${line.caller}\t`, text: trimTrailing(line.msg) };
    linePartsOf.set(line, parts);
  }
  return parts;
}
interface LineParts {
  readonly head: string;
  readonly text: string;
}
const linePartsOf = new WeakMap<Line, LineParts>();

/** resource_division.go:64 logs at V3. */
const DIVISION_V = 3;

/**
 * KAI divides top-level queues first and then each one's children (proportion.go:410-423), each
 * level's queues in Go map order — random each time — which a hash of the session stands for.
 */
function divisionOrder(division: readonly QueueDivision[], session: string): QueueDivision[] {
  const tree = divisionTree(division);
  // Each queue's key is unitHash(`${session}/${salt}/${pool}/${name}`), hashed in parts: the
  // session once a cycle, not once per queue, and no key string made (a cycle's every queue, twice).
  const sessionState = hashOn(hashState(), `${session}/`);
  const tops = shuffled(tree.tops, hashOn(hashOn(sessionState, "log"), "/"));
  // The children are divided top by top, in another map order than the tops were logged in.
  const order = tops.slice();
  for (const top of shuffled(tops, hashOn(hashOn(sessionState, "divide"), "/")))
    for (const child of shuffled(tree.children.get(top) ?? NO_QUEUES, hashOn(hashOn(sessionState, top.name), "/"))) order.push(child);
  return order;
}
const NO_QUEUES: readonly QueueDivision[] = [];

/** The most queues shuffled by a packed key (below): each key's index takes 10 bits beside its 32. */
const PACKED_QUEUES = 1024;
const packedKeys = new Float64Array(PACKED_QUEUES);

/**
 * Queues in the order of their keys, `unitHash` of each one's `<pool>/<name>` hashed on from
 * `saltState` (ties keep their order). Each key's 32 bits and its queue's index are packed into
 * one number (exact: below 2^42) and sorted as numbers, natively: key order, ties by index, the
 * order a stable sort by key gives, without a comparison function called per pair (a platform's
 * cycle shuffles 250 queues, once every simulated second).
 */
function shuffled(queues: readonly QueueDivision[], saltState: number): QueueDivision[] {
  const n = queues.length;
  if (n > PACKED_QUEUES) return shuffledByKey(queues, saltState);
  const packed = packedKeys.subarray(0, n);
  for (let i = 0; i < n; i++) packed[i] = keyBits(queues[i] as QueueDivision, saltState) * PACKED_QUEUES + i;
  packed.sort();
  const order = new Array<QueueDivision>(n);
  for (let i = 0; i < n; i++) order[i] = queues[(packed[i] as number) % PACKED_QUEUES] as QueueDivision;
  return order;
}

/** shuffled's order for more queues than a packed key has room for, by a comparison sort. */
function shuffledByKey(queues: readonly QueueDivision[], saltState: number): QueueDivision[] {
  const keys = queues.map((q) => keyBits(q, saltState));
  const order = queues.map((_, i) => i);
  order.sort((a, b) => (keys[a] as number) - (keys[b] as number));
  return order.map((i) => queues[i] as QueueDivision);
}

/** A queue's shuffle key as its 32 bits (ordered as unitOfState orders them). */
function keyBits(q: QueueDivision, saltState: number): number {
  return mixed(hashOn(hashOn(hashOn(saltState, q.nodePool), "/"), q.name));
}

/**
 * A division's top-level queues and each one's children, in the division's order: worked out
 * once per division (an idle cycle, and a cycle that changed no queue, log the division before),
 * from the tree's shape, which is worked out once per run: a division lists the same queues in
 * the same places whatever their figures (checked entry by entry).
 */
function divisionTree(division: readonly QueueDivision[]): DivisionTree {
  let tree = divisionTrees.get(division);
  if (tree === undefined) {
    if (shape === undefined || !shape.fits(division)) shape = new TreeShape(division);
    tree = shape.treeOf(division);
    divisionTrees.set(division, tree);
  }
  return tree;
}
interface DivisionTree {
  readonly tops: readonly QueueDivision[];
  readonly children: ReadonlyMap<QueueDivision, readonly QueueDivision[]>;
}
const divisionTrees = new WeakMap<readonly QueueDivision[], DivisionTree>();

/** Where a division's top-level queues are, and each one's children (a queue whose parent is no top-level queue is in neither). */
class TreeShape {
  private readonly names: readonly string[];
  private readonly pools: readonly string[];
  private readonly parents: readonly (string | null)[];
  private readonly tops: readonly number[];
  private readonly children: readonly (readonly number[])[];

  constructor(division: readonly QueueDivision[]) {
    this.names = division.map((q) => q.name);
    this.pools = division.map((q) => q.nodePool);
    this.parents = division.map((q) => q.parent);
    const tops = division.flatMap((q, i) => (q.parent === null ? [i] : []));
    const topAt = new Map(tops.map((i, k) => [`${(division[i] as QueueDivision).nodePool}/${(division[i] as QueueDivision).name}`, k]));
    const children = tops.map((): number[] => []);
    division.forEach((q, i) => {
      if (q.parent === null) return;
      const k = topAt.get(`${q.nodePool}/${q.parent}`);
      if (k !== undefined) children[k]?.push(i);
    });
    this.tops = tops;
    this.children = children;
  }

  /** Whether `division` lists the same queues, in the same places, with the same parents. */
  fits(division: readonly QueueDivision[]): boolean {
    if (division.length !== this.names.length) return false;
    for (let i = 0; i < division.length; i++) {
      const q = division[i] as QueueDivision;
      if (q.name !== this.names[i] || q.nodePool !== this.pools[i] || q.parent !== this.parents[i]) return false;
    }
    return true;
  }

  treeOf(division: readonly QueueDivision[]): DivisionTree {
    const tops = this.tops.map((i) => division[i] as QueueDivision);
    const children = new Map<QueueDivision, QueueDivision[]>();
    this.tops.forEach((_, k) => {
      const kids = this.children[k] as readonly number[];
      if (kids.length > 0)
        children.set(
          tops[k] as QueueDivision,
          kids.map((i) => division[i] as QueueDivision),
        );
    });
    return { tops, children };
  }
}
/** The shape of the divisions met last (one run's, mostly). */
let shape: TreeShape | undefined;

/**
 * A queue's "Resource division result" line (resource_division.go:64): every figure through
 * HumanizeResource, GPUs as they are, CPU in cores, memory in decimal GB; requested is the
 * request capped by the limit (GetRequestableShare); CPU and memory have no quota or limit
 * (Unlimited), so each queue's fair share of them is its request; no usage database, so the
 * historical usage is 0. Made once per entry: the idle cycles repeat the last cycle's entries.
 */
const divisionLineCache = new WeakMap<QueueDivision, Line>();
function divisionLine(q: QueueDivision): Line {
  let line = divisionLineCache.get(q);
  if (line === undefined) {
    const gpuRequested = q.limit >= 0 ? Math.min(q.limit, q.requested) : q.requested;
    const cpu = (milli: number) => humanize(milli / 1000);
    const gb = (bytes: number) => humanize(bytes / 1e9);
    line = {
      v: DIVISION_V,
      caller: "resource_division/resource_division.go:64",
      msg:
        `Resource division result for queue <${queueName({ name: q.name, pool: q.nodePool })}>: Queue Priority: <${QUEUE_PRIORITY}>, ` +
        `GPU: deserved: <${humanize(q.deserved)}>, requested: <${humanize(gpuRequested)}>, maxAllowed: <${humanize(q.limit)}>, allocated: <${humanize(q.allocated)}>, historicalUsage: <0>, fairShare: <${humanize(q.fairShare)}> ` +
        `CPU (cores): deserved: <Unlimited>, requested: <${cpu(q.fairShareCpuMilli)}>, maxAllowed: <Unlimited>, allocated: <${cpu(q.allocatedCpuMilli)}>, historicalUsage: <0>, fairShare: <${cpu(q.fairShareCpuMilli)}> ` +
        `memory (GB): deserved: <Unlimited>, requested: <${gb(q.fairShareMemoryBytes)}>, maxAllowed: <Unlimited>, allocated: <${gb(q.allocatedMemoryBytes)}>, historicalUsage: <0>, fairShare: <${gb(q.fairShareMemoryBytes)}> `,
    };
    divisionLineCache.set(q, line);
  }
  return line;
}

/**
 * node_info.go:127, a node whose GPU capacity and allocatable differ: both as DetailedString prints
 * them, the scalar resources after the base ones (pods the only one a gpusynth node lists). Made
 * once per node's facts: every cycle repeats them until a GPU's health changes.
 */
const gpuShortLineCache = new WeakMap<NodeResources, Line>();
function gpuShortLine(n: NodeResources): Line {
  let line = gpuShortLineCache.get(n);
  if (line === undefined) {
    const detailed = (r: NodeResources["capacity"]) => `${resourceText(r.cpuMilli, r.memoryBytes, r.gpus)}, pods: ${KUBELET_MAX_PODS}`;
    line = {
      v: 2,
      level: "warn",
      caller: "node_info/node_info.go:127",
      msg: `For node ${n.node}, the capacity and allocatable are different. Capacity ${detailed(n.capacity)}, Allocatable ${detailed(n.allocatable)}`,
    };
    gpuShortLineCache.set(n, line);
  }
  return line;
}

/** KAI's DefaultQueuePriority (pkg/common/constants/constants.go:13), a Queue's without spec.priority; Run:ai's: PENDING (cantfind.md). */
const QUEUE_PRIORITY = 100;

/**
 * An attempt's lines, made once per record: a job still pending is attempted again in every idle
 * cycle with the same words, and the idle cycles this log derives (idleCycle) repeat the records of
 * the cycle that ran, so its lines are kept with the record.
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

/** A job's resources in the attempt lines: the sum of its pods' requests. */
const resources = (a: CycleAttemptRef) => {
  const w = a.workload;
  return `<${resourceText(w.cpuMilliPerGpu * w.gpus, w.memoryBytesPerGpu * w.gpus, w.gpus)}>`;
};

/** calcVictimNames (solvers/job_solver.go:146): "<ns/pod>" names, printed as a Go []string. */
const tasks = (a: CycleAttemptRef) => `<[${a.victims.flatMap((v) => v.pods.map((p) => `<${v.workload.namespace}/${p.name}>`)).join(" ")}]>`;

/** "Skipping <noun> for job: <…> - is not easier to <verb> for than: <…>": a scheduling-signature skip. */
function skipLine(a: CycleAttemptRef, action: Action, caller: string, noun: string, verb: string): Line {
  const than = `<${a.notEasierThan?.namespace}/${a.notEasierThan?.podGroup}>`;
  return { v: 3, caller, action, msg: `Skipping ${noun} for job: ${job(a)} - is not easier to ${verb} for than: ${than}` };
}

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
    // Logged in attemptToAllocateJob; the bind requests follow at stmt.Commit() (allocate.go:65).
    lines.push({ v: 3, caller: "allocate/allocate.go:106", action: "allocate", msg: `Succesfully allocated resources for job: ${job(a)}` });
    lines.push(...bindLines(a, "allocate"));
  } else if (a.outcome === "pipelined") {
    lines.push({
      v: 3,
      caller: "allocate/allocate.go:94",
      action: "allocate",
      msg: `Some tasks were pipelined, setting all job to be pipelined for job: ${job(a)}`,
    });
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

/** consolidation.go: gpusynth moves no running job, so an attempt ends without a strategy. */
function consolidationLines(a: CycleAttemptRef): Line[] {
  const action = "consolidation";
  if (a.outcome === "skipped") return [skipLine(a, action, "consolidation/consolidation.go:60", "consolidation", "consolidate")];
  return [
    {
      v: 3,
      caller: "consolidation/consolidation.go:83",
      action,
      msg: `Attempting to consolidate running jobs in order to make room for job: ${job(a)}, resources: ${resources(a)}`,
    },
    a.outcome === "not-enough-gpus"
      ? {
          v: 3,
          caller: "consolidation/consolidation.go:87",
          action,
          msg: `Can't consolidate for job: ${job(a)}, not enough allocatable GPUs in the cluster`,
        }
      : { v: 3, caller: "consolidation/consolidation.go:113", action, msg: `Didn't find a consolidation strategy for job: ${job(a)}` },
  ];
}

function reclaimLines(a: CycleAttemptRef): Line[] {
  if (a.outcome === "skipped") return [skipLine(a, "reclaim", "reclaim/reclaim.go:77", "reclaim", "reclaim")];
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
      caller: "reclaim/reclaim.go:87",
      action: "reclaim",
      msg: `Reclaimed resources for job ${job(a)}, evicting reclaimee tasks: ${tasks(a)}.`,
    });
  } else {
    lines.push({ v: 3, caller: "reclaim/reclaim.go:95", action: "reclaim", msg: `Didn't find a reclaim strategy for job ${job(a)}` });
  }
  return lines;
}

function preemptLines(a: CycleAttemptRef): Line[] {
  if (a.outcome === "skipped") return [skipLine(a, "preempt", "preempt/preempt.go:73", "preemption", "preempt")];
  const queue = queueName({ name: a.queue, pool: a.nodePool });
  const lines: Line[] = [
    {
      v: 3,
      caller: "preempt/preempt.go:103",
      action: "preempt",
      msg: `Attempting to preempt for job: ${job(a)}, priority: <${a.workload.priority}>, queue: <${queue}>, resources: ${resources(a)}`,
    },
  ];
  if (a.outcome === "preempted")
    lines.push({
      v: 3,
      caller: "preempt/preempt.go:85",
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

/** cache.go Bind: one bind request per task; whole GPUs use no GPU group (an empty []string). */
function bindLines(a: CycleAttemptRef, action: Action): Line[] {
  const w = a.workload;
  return a.pods.map((pod) => {
    const gpus = pod.gpus.length;
    return {
      v: 3,
      caller: "cache/cache.go:272",
      action,
      msg: `Creating bind request for task <${w.namespace}/${pod.name}> to node <${pod.node}> gpuGroup: <[]>, requires: <${requirementsText(gpus, w.cpuMilliPerGpu * gpus, w.memoryBytesPerGpu * gpus)}> GPUs`,
    };
  });
}
