/**
 * The composition root every command reads: frames carry what the run was asked to collect and
 * nothing else, each log record arrives in exactly one frame, observers see every event, and the
 * control plane observes at each frame. The same seed gives the same frames.
 */
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, driveAsync, every, type Frame, frameKept, type LogRecordOut, type Sample } from "@gpusynth/constructs";
import { type DomainEvent, simulatedMs } from "@gpusynth/sim";
import { describe, expect, it } from "vitest";

const scenario = fileURLToPath(new URL("../../../blueprints/scenarios/preemption-storm.yaml", import.meta.url));
const { blueprint } = loadBlueprint(scenario);
const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

/**
 * Where two runs' frames differ, sample by sample (target, series, value, counter start), as
 * lines naming the frame and the series; none when every reading is the same. Compared field by
 * field, the text of a series written only where it differs.
 */
function differences(a: readonly Frame[], b: readonly Frame[]): string[] {
  const out: string[] = [];
  const line = (f: Frame, t: Frame["targets"][number], s: Sample | undefined) =>
    s === undefined
      ? "nothing"
      : `${f.simulatedMs} ${t.target.job}@${t.target.host}:${t.target.port} ${s.family.name}${JSON.stringify(s.labels)} ${s.value} ${s.startMs}`;
  if (a.length !== b.length) return [`${a.length} frames against ${b.length}`];
  a.forEach((fa, i) => {
    const fb = b[i] as Frame;
    if (fa.simulatedMs !== fb.simulatedMs || fa.targets.length !== fb.targets.length)
      out.push(`frame ${i}: ${fa.simulatedMs} with ${fa.targets.length} targets against ${fb.simulatedMs} with ${fb.targets.length}`);
    fa.targets.forEach((ta, j) => {
      const tb = fb.targets[j];
      if (tb === undefined) return;
      const [as, bs] = [ta.samples, tb.samples];
      const length = Math.max(as.length, bs.length);
      for (let k = 0; k < length && out.length < 5; k++) {
        const [sa, sb] = [as[k], bs[k]];
        const same =
          sa !== undefined &&
          sb !== undefined &&
          ta.target.job === tb.target.job &&
          ta.target.host === tb.target.host &&
          ta.target.port === tb.target.port &&
          sa.family === sb.family &&
          Object.is(sa.value, sb.value) &&
          sa.startMs === sb.startMs &&
          sameLabels(sa.labels, sb.labels);
        if (!same) out.push(`${line(fa, ta, sa)} against ${line(fb, tb, sb)}`);
      }
    });
  });
  return out;
}

function sameLabels(a: Sample["labels"], b: Sample["labels"]): boolean {
  if (a === b) return true;
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  return keys.every((key) => a[key] === b[key]);
}

function frames(run: ClusterRun, durationMs: number, intervalMs: number): Frame[] {
  const out: Frame[] = [];
  drive(run, every(intervalMs, { toMs: durationMs }), (frame) => out.push(frameKept(frame)));
  return out;
}

describe("ClusterRun", () => {
  it("ticks a virtual clock from one interval in to the end, or from its start and to its end when asked", () => {
    const minutes = (schedule: Iterable<number>) => [...schedule].map((t) => t / MINUTE);
    expect(minutes(every(15 * MINUTE, { toMs: 60 * MINUTE }))).toEqual([15, 30, 45, 60]);
    expect(minutes(every(15 * MINUTE, { toMs: 10 * MINUTE }))).toEqual([]);
    expect(minutes(every(15 * MINUTE, { fromMs: 30 * MINUTE, toMs: 70 * MINUTE }))).toEqual([45, 60]);
    expect(minutes(every(15 * MINUTE, { toMs: 40 * MINUTE, atStart: true, atEnd: true }))).toEqual([0, 15, 30, 40]);
    expect(minutes(every(15 * MINUTE, { toMs: 30 * MINUTE, atEnd: true }))).toEqual([15, 30]);
  });

  it("hands every consumer each frame in order, and drives asynchronous consumers one instant at a time", async () => {
    const seen: string[] = [];
    drive(
      new ClusterRun(blueprint, { metrics: false, readsGpus: false }),
      every(MINUTE, { toMs: 2 * MINUTE }),
      (f) => seen.push(`a${f.simulatedMs}`),
      (f) => seen.push(`b${f.simulatedMs}`),
    );
    expect(seen).toEqual(["a60000", "b60000", "a120000", "b120000"]);
    const order: string[] = [];
    await driveAsync(new ClusterRun(blueprint, { metrics: false, readsGpus: false }), every(MINUTE, { toMs: 2 * MINUTE }), [
      {
        before: (t) => order.push(`before ${t}`),
        consume: async (f) => {
          await new Promise((resolve) => setTimeout(resolve, 5));
          order.push(`slow ${f.simulatedMs}`);
        },
      },
      {
        consume: (f) => {
          order.push(`then ${f.simulatedMs}`);
        },
      },
    ]);
    expect(order).toEqual(["before 60000", "slow 60000", "then 60000", "before 120000", "slow 120000", "then 120000"]);
  });

  it("hands each log record to exactly one frame, in time order, and collects only what it was asked for", () => {
    const withLogs = frames(new ClusterRun(blueprint, { logs: true }), 40 * MINUTE, 5 * MINUTE);
    const records = withLogs.flatMap((f) => f.logs);
    expect(records.length).toBeGreaterThan(100);
    const ahead = withLogs.flatMap((f) => f.logs.filter((r) => r.timeMs > blueprint.time.start + f.simulatedMs));
    expect(ahead).toEqual([]);
    const bare = frames(new ClusterRun(blueprint, { metrics: false, readsGpus: false }), 40 * MINUTE, 5 * MINUTE);
    expect(bare.every((f) => f.targets.length === 0 && f.logs.length === 0)).toBe(true);
    expect(withLogs.every((f) => f.targets.length > 0)).toBe(true);
    // Collecting nothing changes nothing about the story.
    expect(bare.map((f) => f.view.running.length)).toEqual(withLogs.map((f) => f.view.running.length));
  });

  it("collects, when asked for some sources, exactly their targets of a whole frame, and refuses a source it does not have", () => {
    // Lab deploys every source, node-exporter included.
    const lab = loadBlueprint(fileURLToPath(new URL("../../../blueprints/lab.yaml", import.meta.url))).blueprint;
    const whole = new ClusterRun(lab);
    const wholeFrames = frames(whole, 30 * MINUTE, 10 * MINUTE);
    const areaOf = new Map(whole.metrics.constructs.flatMap((c) => c.families.map((f) => [f, c.area] as const)));
    const areas = whole.metrics.constructs.map((c) => c.area);
    expect(areas).toHaveLength(6);
    for (const area of areas) {
      const only = frames(new ClusterRun(lab, { sources: [area] }), 30 * MINUTE, 10 * MINUTE);
      const expected = wholeFrames.map((f) => ({
        ...f,
        targets: f.targets.filter((t) => areaOf.get((t.samples[0] as Sample).family) === area),
      }));
      expect(expected.every((f) => f.targets.length > 0)).toBe(true);
      expect(differences(only, expected), area).toEqual([]);
    }
    expect(() => new ClusterRun(lab, { sources: ["dcgm"] })).toThrow(
      /no metric source "dcgm" in this run: its sources are runai, dcgm-exporter/,
    );
  });

  it("drops the same of a stretch nobody reads however often it skips it, and writes and reads the same after it", () => {
    // A live warm-up and an inventory's later window skip as they go, not once at the end (skipPast).
    const after = (run: ClusterRun) => {
      const out: Frame[] = [];
      drive(run, every(5 * MINUTE, { fromMs: 40 * MINUTE, toMs: 55 * MINUTE }), (frame) => out.push(frameKept(frame)));
      return out;
    };
    const once = new ClusterRun(blueprint, { logs: true });
    once.advanceTo(simulatedMs(40 * MINUTE));
    once.skipPast();
    const often = new ClusterRun(blueprint, { logs: true });
    for (let t = MINUTE; t <= 40 * MINUTE; t += 3 * MINUTE + 7_000) {
      often.advanceTo(simulatedMs(Math.min(t, 40 * MINUTE)));
      often.skipPast();
    }
    often.advanceTo(simulatedMs(40 * MINUTE));
    often.skipPast();
    const hourly = new ClusterRun(blueprint, { logs: true });
    hourly.skipTo(simulatedMs(40 * MINUTE));
    const expected = after(once).flatMap((f) => f.logs);
    // Both sources write in the stretch read: the scheduler's cycles and the storm's events.
    expect(new Set(expected.map((r) => r.receiver))).toEqual(new Set(["k8s_events", "filelog"]));
    expect(expected.every((r) => r.timeMs > blueprint.time.start + 40 * MINUTE)).toBe(true);
    const [oftenAfter, hourlyAfter] = [after(often), after(hourly)];
    expect(oftenAfter.flatMap((f) => f.logs)).toEqual(expected);
    expect(hourlyAfter.flatMap((f) => f.logs)).toEqual(expected);
    // The GPUs' energy summed as the stretch goes (skipPast) reads the same as summed at once by
    // the first reading after it: every sample of a run that never skipped, the energy counters too.
    const unskipped = new ClusterRun(blueprint);
    unskipped.advanceTo(simulatedMs(40 * MINUTE));
    const read = after(unskipped);
    expect(
      read.flatMap((f) => f.targets.flatMap((t) => t.samples)).some((s) => s.family.name === "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"),
    ).toBe(true);
    expect(differences(oftenAfter, read)).toEqual([]);
    expect(differences(hourlyAfter, read)).toEqual([]);
  });

  it("counts, with logWriting.tally, exactly the scheduler's lines a run writes, frame by frame, after a first cycle written whole", () => {
    const scheduler = { events: false, scheduler: true };
    const written = frames(new ClusterRun(blueprint, { logs: scheduler }), 40 * MINUTE, 5 * MINUTE);
    const tallied = frames(new ClusterRun(blueprint, { logs: scheduler, logWriting: { tally: true } }), 40 * MINUTE, 5 * MINUTE);
    expect(tallied.map((f) => f.logs.length + f.talliedLogs)).toEqual(written.map((f) => f.logs.length));
    // What is written has the fields of every line: the first cycle, whole but for the per-queue division.
    const first = tallied.flatMap((f) => f.logs);
    expect(first.length).toBeGreaterThan(5);
    expect(first.at(-1)?.body).toMatch(/End scheduling/);
    const fields = (records: readonly LogRecordOut[]) => [
      ...new Set(records.map((r) => JSON.stringify([r.area, r.receiver, r.resource, r.attributes]))),
    ];
    expect(fields(written.flatMap((f) => f.logs))).toEqual(fields(first));
  });

  it("emits the same metrics whether or not the scheduler's log is written", () => {
    // With the log, cycles also report each queue's division; the samples must not notice, also
    // while a reclaim's preemptor waits pipelined (the storm's first reclaim, at 09:30:01).
    // A frame a minute, and every second through the reclaim (its victims terminate within 30 s).
    const schedule = [
      ...every(MINUTE, { toMs: 30 * MINUTE }),
      ...every(1_000, { fromMs: 30 * MINUTE, toMs: 31 * MINUTE }),
      simulatedMs(32 * MINUTE),
    ];
    let pipelinedFrames = 0;
    const framesOf = (run: ClusterRun) => {
      const out: Frame[] = [];
      drive(run, schedule, (frame) => {
        out.push(frameKept(frame));
        if (frame.view.pending.some((w) => w.pipelinedUntil !== null)) pipelinedFrames++;
      });
      return out;
    };
    const withLog = framesOf(new ClusterRun(blueprint, { logs: { events: false, scheduler: true } }));
    const without = framesOf(new ClusterRun(blueprint));
    expect(pipelinedFrames).toBeGreaterThan(0);
    expect(differences(without, withLog)).toEqual([]);
  });

  it("lets observers see every event, and gives the same frames for the same seed", () => {
    const seen: DomainEvent[] = [];
    const first = frames(new ClusterRun(blueprint, { seed: 5, observers: [(e) => seen.push(e)], logs: true }), 30 * MINUTE, 10 * MINUTE);
    const second = frames(new ClusterRun(blueprint, { seed: 5, logs: true }), 30 * MINUTE, 10 * MINUTE);
    expect(seen.some((e) => e.kind === "WorkloadSubmitted")).toBe(true);
    expect(differences(second, first)).toEqual([]);
    expect(JSON.stringify(second.map((f) => f.logs))).toEqual(JSON.stringify(first.map((f) => f.logs)));
  });

  it("keeps nothing of a GPU's runs where nothing reads the GPUs, so a summary's heap does not grow with simulated time", () => {
    const platform = loadBlueprint(fileURLToPath(new URL("../../../blueprints/platform.yaml", import.meta.url))).blueprint;
    // A collection on demand, as V8 exposes it to a context made after the flag is set.
    setFlagsFromString("--expose-gc");
    const collect = runInNewContext("gc") as () => void;
    const run = new ClusterRun(platform, { metrics: false, readsGpus: false });
    const heapAt = (days: number) => {
      run.advanceTo(simulatedMs(days * DAY));
      collect();
      return process.memoryUsage().heapUsed;
    };
    const afterOneDay = heapAt(1);
    // Each container's time on each GPU kept for a reading that never comes: 49 MiB more after day 2.
    expect((heapAt(2) - afterOneDay) / 2 ** 20).toBeLessThan(5);
    // A run that collects metrics or keeps the control plane does read them; one that does neither says whether it does.
    expect(() => new ClusterRun(platform, { readsGpus: false })).toThrow(/reads its GPUs/);
    expect(() => new ClusterRun(platform, { metrics: false })).toThrow(/says whether anything reads its GPUs/);
    expect(() => new ClusterRun(platform, { metrics: false, readsGpus: false, controlPlane: {} })).toThrow(/reads its GPUs/);
  });

  it("has the control plane observe the cluster at each frame", () => {
    const run = new ClusterRun(blueprint, { controlPlane: { retentionMs: 60 * MINUTE, stepMs: MINUTE } });
    expect(run.controlPlane?.observed).toBe(false);
    run.advanceTo(simulatedMs(MINUTE));
    run.frame();
    expect(run.controlPlane?.observed).toBe(true);
  });
});
