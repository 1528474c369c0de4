/**
 * The scheduler's log and its events tell the same story: read preemption-storm.yaml from both
 * sides. Every Evict event (reclaim or priority preemption) has the success line of its action
 * in the same cycle naming the preemptor and the evicted pod, and every success line has its
 * Evict events — as KAI's reclaim.go / preempt.go log what its evictions record. Every
 * Pipelined event is a pod of a job that evicted others in that cycle; every Scheduled event is
 * a bind request in the log's same cycle or a pipelined pod, and every bind request has its
 * Scheduled event unless client-go's spam filter dropped it; every Unschedulable event on a pod
 * group follows a failed allocation of that job in the same cycle.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type LogRecordOut } from "@gpusynth/constructs";
import { beforeAll, describe, expect, it } from "vitest";
import { SPAM_BURST } from "../src/kubernetes-events/event-recorder.js";

const storm = fileURLToPath(new URL("../../../blueprints/scenarios/preemption-storm.yaml", import.meta.url));
const MINUTE = 60_000;

interface Eviction {
  readonly second: string;
  readonly action: "reclaim" | "preempt";
  readonly pod: string;
  readonly preemptor: string;
}

describe("evictions in the scheduler's log and in its events", () => {
  const fromEvents: Eviction[] = [];
  const fromLog: Eviction[] = [];
  let attempts = 0;
  /** "<second> <ns/pod>" of each event of a reason, and of the log lines that should match them. */
  const events = new Map<string, string[]>();
  const binds: string[] = [];
  const preemptorPods = new Set<string>();
  const preemptorJobs: string[] = [];
  const failedAllocations = new Set<string>();
  /** Each session's allocate lines in order: "allocated <job>", "bind <pod>", "pipelined <job>". */
  const allocateSteps = new Map<string, string[]>();

  beforeAll(() => {
    const { blueprint } = loadBlueprint(storm);
    const records: LogRecordOut[] = [];
    drive(
      new ClusterRun(blueprint, { metrics: false, readsGpus: false, logs: true }),
      every(10 * MINUTE, { toMs: 3 * 60 * MINUTE }),
      (frame) => records.push(...frame.logs),
    );
    const second = (r: LogRecordOut) => new Date(r.timeMs).toISOString().slice(0, 19);
    // A cycle's lines drift past its period boundary; the cycle is the second its first line
    // ("Start scheduling") falls in, which its session ID prefix ties to every later line.
    const cycleStart = new Map<string, string>();
    for (const r of records) {
      if (r.receiver === "k8s_events") {
        const reason = r.attributes["k8s.event.reason"] as string;
        const list = events.get(reason) ?? [];
        list.push(`${second(r)} ${r.attributes["k8s.namespace.name"]}/${r.resource["k8s.object.name"]}`);
        events.set(reason, list);
      }
      if (r.receiver === "k8s_events" && r.attributes["k8s.event.reason"] === "Evict") {
        const preempt = /^Pod (\S+) was preempted by higher priority workload (\S+)$/.exec(r.body);
        const reclaim = /^Pod (\S+) was preempted by workload (\S+)\.\n/.exec(r.body);
        const match = preempt ?? reclaim;
        if (match === null) throw new Error(`an Evict event this test cannot read: ${r.body}`);
        fromEvents.push({
          second: second(r),
          action: preempt === null ? "reclaim" : "preempt",
          pod: match[1] as string,
          preemptor: match[2] as string,
        });
      }
      if (r.receiver !== "filelog") continue;
      const session = /\t\[.\[3\dm(\w{6}).\[0m\] /.exec(r.body)?.[1] as string; // . is the colour codes' ESC
      if (r.body.endsWith("Start scheduling ...")) cycleStart.set(session, second(r));
      if (r.body.includes("Attempting to preempt for job")) attempts++;
      const step =
        /Succesfully allocated resources for job: <(\S+)>$/.exec(r.body)?.[1]?.replace(/^(.*)$/, "allocated $1") ??
        /Creating bind request for task <(\S+)> to node/.exec(r.body)?.[1]?.replace(/^(.*)$/, "bind $1") ??
        /Some tasks were pipelined, setting all job to be pipelined for job: <(\S+)>$/.exec(r.body)?.[1]?.replace(/^(.*)$/, "pipelined $1");
      if (step !== undefined) allocateSteps.set(session, [...(allocateSteps.get(session) ?? []), step]);
      const bind = /Creating bind request for task <(\S+)> to node/.exec(r.body);
      if (bind !== null) binds.push(`${cycleStart.get(session)} ${bind[1]}`);
      const failed = /Could not allocate resources for job: <(\S+)> of queue/.exec(r.body);
      if (failed !== null) failedAllocations.add(`${cycleStart.get(session)} ${failed[1]}`);
      const line =
        /Successfully preempted for job <(\S+)>, preempted tasks: <\[(.*)\]>$/.exec(r.body) ??
        /Reclaimed resources for job <(\S+)>, evicting reclaimee tasks: <\[(.*)\]>\.$/.exec(r.body);
      // calcVictimNames prints each victim as <ns/pod> inside the Go slice's brackets.
      if (line === null) continue;
      preemptorJobs.push(`${cycleStart.get(session)} ${line[1]}`);
      for (const pod of (line[2] as string).split(" ").map((p) => p.replace(/^<(.*)>$/, "$1")))
        fromLog.push({
          second: cycleStart.get(session) as string,
          action: r.body.includes("Reclaimed") ? "reclaim" : "preempt",
          pod,
          preemptor: line[1] as string,
        });
    }
  });

  it("tells the storm's reclaims and its priority preemption on both sides", () => {
    expect(fromEvents.filter((e) => e.action === "reclaim").length).toBeGreaterThan(0);
    expect(fromEvents.filter((e) => e.action === "preempt").length).toBeGreaterThan(0);
  });

  it("has, for every Evict event, its action's success line in the same cycle, and the reverse", () => {
    const key = (e: Eviction) => `${e.second} ${e.action} ${e.pod} by ${e.preemptor}`;
    expect(fromLog.map(key).sort()).toEqual(fromEvents.map(key).sort());
  });

  it("pipelines exactly the pods of the jobs that evicted others, in the cycle they did and each cycle while their victims terminate", () => {
    const pipelined = events.get("Pipelined") ?? [];
    expect(pipelined.length).toBeGreaterThan(0);
    // Pod names are <workload>-<n>-<m>; the job named in the log is pg-<workload>-<uid>.
    const jobOf = (entry: string) => entry.replace(/^(\S+ [^/]+\/)(.*)-\d+-\d+$/, "$1$2");
    const jobs = new Set(preemptorJobs.map((entry) => entry.replace(/\/pg-(.*)-[0-9a-f]{8}-[0-9a-f-]{27}$/, "/$1")));
    const seconds = (entry: string) => Date.parse(`${entry.split(" ")[0]}Z`) / 1000;
    // The eviction's second, or one within the grace period after it (30 s in the storm).
    const evictedBy = (entry: string) => {
      const job = jobOf(entry).split(" ")[1];
      return [...jobs].some((e) => e.endsWith(` ${job}`) && seconds(entry) - seconds(e) >= 0 && seconds(entry) - seconds(e) < 30);
    };
    for (const entry of pipelined) {
      expect(evictedBy(entry), entry).toBe(true);
      preemptorPods.add(entry);
    }
    // Every job that evicted is pipelined in the eviction's cycle, and some again in later ones.
    for (const job of jobs) expect(pipelined.map(jobOf), job).toContain(job);
    expect(pipelined.filter((entry) => !jobs.has(jobOf(entry))).length).toBeGreaterThan(0);
  });

  it("logs a job's allocation before its bind requests, as stmt.Commit binds after attemptToAllocateJob logs (allocate.go:65, :106)", () => {
    let checked = 0;
    for (const steps of allocateSteps.values())
      steps.forEach((step, i) => {
        if (!step.startsWith("bind ")) return;
        // The pod's job: <ns>/<workload>-<n>-<m> belongs to <ns>/pg-<workload>-<uid>.
        const [namespace, pod] = step.slice("bind ".length).split("/") as [string, string];
        const owner = steps
          .slice(0, i)
          .reverse()
          .find((s) => !s.startsWith("bind "));
        expect(owner, step).toMatch(new RegExp(`^allocated ${namespace}/pg-${pod.replace(/-\d+-\d+$/, "")}-[0-9a-f-]{36}$`));
        checked++;
      });
    expect(checked).toBeGreaterThan(0);
    // A preemptor waiting for its victims is pipelined again in the cycles after its eviction.
    expect([...allocateSteps.values()].flat().filter((s) => s.startsWith("pipelined ")).length).toBeGreaterThan(0);
  });

  it("has a bind request in the log's same cycle for every Scheduled event, or a Pipelined one", () => {
    const scheduled = events.get("Scheduled") ?? [];
    expect(scheduled.length).toBeGreaterThan(binds.length / 2);
    const bound = new Set(binds);
    const pipelined = new Set(events.get("Pipelined") ?? []);
    for (const entry of scheduled) expect(bound.has(entry) || pipelined.has(entry), entry).toBe(true);
    // client-go's spam filter (event-recorder.ts) drops a bind's Scheduled event when the pod has
    // spent its burst of 25 scheduler events (a victim pending again, Unschedulable every second)
    // and no token has come back since.
    const schedulerEvents = ["Scheduled", "Unschedulable", "Pipelined"].flatMap((reason) => events.get(reason) ?? []);
    const spent = (entry: string) => {
      const [at, pod] = entry.split(" ");
      return schedulerEvents.filter((e) => e.endsWith(` ${pod}`) && (e.split(" ")[0] as string) < (at as string)).length >= SPAM_BURST;
    };
    const unannounced = binds.filter((entry) => !scheduled.includes(entry));
    for (const entry of unannounced) expect(spent(entry), entry).toBe(true);
    expect(unannounced.length).toBeLessThan(binds.length);
  });

  it("records Unschedulable on a pod group only in a cycle whose log failed to allocate that job", () => {
    const unschedulable = (events.get("Unschedulable") ?? []).filter((entry) => entry.includes("/pg-"));
    expect(unschedulable.length).toBeGreaterThan(0);
    for (const entry of unschedulable) expect(failedAllocations, entry).toContain(entry);
  });

  it("logs the jobs still pending as attempted again, each cycle", () => {
    expect(attempts).toBeGreaterThan(fromEvents.filter((e) => e.action === "preempt").length);
  });
});
