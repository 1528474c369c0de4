/**
 * A straggler (blueprints/scenarios/straggler.yaml): node 1's GPU 3 runs under a 400 W limit from
 * 00:30 to 01:30 while a 16-GPU job holds both nodes. Its readings show it — SM clock down, power
 * at the lower cap, cooler, power-violation time counting — and its job runs at its pace, ending as
 * much later as the hour at that pace cost; the readings under the cap agree at any cadence.
 */
import { fileURLToPath } from "node:url";
import { GPU_MODELS, loadBlueprint, POWER_CAP_FRACTION, powerCapPace } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type Frame } from "@gpusynth/constructs";
import type { DomainEvent } from "@gpusynth/sim";
import { beforeAll, describe, expect, it } from "vitest";

const scenario = fileURLToPath(new URL("../../../blueprints/scenarios/straggler.yaml", import.meta.url));
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;
const CAP = { from: 30 * MINUTE, to: 90 * MINUTE, watts: 400 };
const CAPPED = { Hostname: "train-node-1", gpu: "3" };

/** Per minute, each job GPU's SM clock, power, die temperature and power-violation time, by "<node>/<gpu>". */
type Reading = { clock: number; power: number; temp: number; violation: number; util: number; tensor: number };
type Readings = Map<number, Map<string, Reading>>;

function readEvery(intervalMs: number, events?: DomainEvent[]): Readings {
  const { blueprint } = loadBlueprint(scenario);
  const byMinute: Readings = new Map();
  const read = (frame: Frame) => {
    if (frame.simulatedMs % MINUTE !== 0) return;
    const gpus = new Map<string, Reading>();
    const of = (labels: Readonly<Record<string, string>>) => {
      const key = `${labels.Hostname}/${labels.gpu}`;
      let gpu = gpus.get(key);
      if (gpu === undefined) {
        gpu = { clock: 0, power: 0, temp: 0, violation: 0, util: 0, tensor: 0 };
        gpus.set(key, gpu);
      }
      return gpu;
    };
    for (const target of frame.targets)
      for (const s of target.samples) {
        if (s.labels.pod === undefined) continue;
        if (s.family.name === "DCGM_FI_DEV_SM_CLOCK") of(s.labels).clock = s.value;
        else if (s.family.name === "DCGM_FI_DEV_POWER_USAGE") of(s.labels).power = s.value;
        else if (s.family.name === "DCGM_FI_DEV_GPU_TEMP") of(s.labels).temp = s.value;
        else if (s.family.name === "DCGM_FI_DEV_POWER_VIOLATION") of(s.labels).violation = s.value;
        else if (s.family.name === "DCGM_FI_DEV_GPU_UTIL") of(s.labels).util = s.value;
        else if (s.family.name === "DCGM_FI_PROF_PIPE_TENSOR_ACTIVE") of(s.labels).tensor = s.value;
      }
    byMinute.set(frame.simulatedMs, gpus);
  };
  const run = new ClusterRun(
    { ...blueprint, telemetry: { ...blueprint.telemetry, dcgmCounters: ["DCGM_FI_DEV_POWER_VIOLATION"] } },
    { sources: ["dcgm-exporter"], ...(events === undefined ? {} : { observers: [(e) => events.push(e)] }) },
  );
  drive(run, every(intervalMs, { toMs: 150 * MINUTE, atStart: true }), read);
  return byMinute;
}

describe("a straggler: one GPU of a distributed job under a lowered power limit", () => {
  const events: DomainEvent[] = [];
  let fine: Readings;
  beforeAll(() => {
    fine = readEvery(15_000, events);
  });
  const capped = `${CAPPED.Hostname}/${CAPPED.gpu}`;
  const peers = (t: number) => [...(fine.get(t) ?? new Map())].filter(([key]) => key !== capped).map(([, r]) => r);

  it("slows the whole job to the capped GPU's pace: it ends as much later as the hour under the cap cost", () => {
    const started = events.find((e) => e.kind === "WorkloadStarted");
    const ended = events.find((e) => e.kind === "WorkloadCompleted");
    const pace = powerCapPace(GPU_MODELS["H100-80GB-HBM3"], CAP.watts);
    // Full speed to the cap, the cap's hour at its pace, full speed for the rest of its 2 hours.
    const expected = CAP.to + (2 * HOUR - (CAP.from - (started?.t ?? 0)) - (CAP.to - CAP.from) * pace);
    expect(Math.abs((ended?.t ?? 0) - expected)).toBeLessThanOrEqual(2);
    expect(pace).toBeGreaterThan(0.7);
    expect(pace).toBeLessThan(0.8);
    expect(events.filter((e) => e.kind === "GpuPowerCap").map((e) => [e.t, e.watts, e.affected.map((w) => w.name)])).toEqual([
      [CAP.from, CAP.watts, ["pretrain"]],
      [CAP.to, null, ["pretrain"]],
    ]);
  });

  it("holds the GPU at the lower cap in the job's steps: clock below its peers', power at the cap, cooler", () => {
    const capW = CAP.watts * POWER_CAP_FRACTION;
    const steps: number[] = [];
    for (let t = CAP.from + 2 * MINUTE; t < CAP.to; t += MINUTE) {
      const gpu = fine.get(t)?.get(capped);
      // A step draws more than the lower cap allows (checkpoint stalls draw less: nothing binds).
      if (gpu === undefined || gpu.power < capW - 10) continue;
      steps.push(t);
      const others = peers(t);
      expect(gpu.power, `${t}`).toBeLessThanOrEqual(capW + 10);
      expect(gpu.clock, `${t}`).toBeLessThan(0.85 * Math.min(...others.map((r) => r.clock)));
      expect(gpu.temp, `${t}`).toBeLessThan(Math.min(...others.map((r) => r.temp)));
    }
    expect(steps.length).toBeGreaterThan(30);
    // Before and after: a GPU like the others.
    for (const t of [CAP.from - MINUTE, CAP.to + 10 * MINUTE]) {
      const gpu = fine.get(t)?.get(capped);
      expect(gpu?.clock).toBe(Math.max(...peers(t).map((r) => r.clock)));
    }
  });

  it("keeps the job's other GPUs waiting on the slow one at every step: busy as before, tensor cores idle for the time lost", () => {
    const pace = powerCapPace(GPU_MODELS["H100-80GB-HBM3"], CAP.watts);
    const end = events.find((e) => e.kind === "WorkloadCompleted")?.t ?? 0;
    /** The peers' mean of a reading over whole minutes of [from, to). */
    const mean = (from: number, to: number, pick: (r: Reading) => number) => {
      const values: number[] = [];
      for (let t = Math.ceil(from / MINUTE) * MINUTE; t < to; t += MINUTE) values.push(...peers(t).map(pick));
      return values.reduce((a, b) => a + b, 0) / values.length;
    };
    const during = (pick: (r: Reading) => number) => mean(CAP.from + MINUTE, CAP.to, pick);
    const after = (pick: (r: Reading) => number) => mean(CAP.to + MINUTE, end - MINUTE, pick);
    expect(during((r) => r.tensor) / after((r) => r.tensor)).toBeCloseTo(pace, 1);
    expect(during((r) => r.util) / after((r) => r.util)).toBeCloseTo(1, 1);
    expect(during((r) => r.power)).toBeLessThan(after((r) => r.power));
  });

  it("counts the time the cap held the clock in the power-violation counter, and only under the cap", () => {
    const at = (t: number) => fine.get(t)?.get(capped)?.violation ?? Number.NaN;
    const peerAt = (t: number) => Math.max(...peers(t).map((r) => r.violation));
    // Nanoseconds: over most of the hour for the capped GPU; its peers' steps stay under their cap.
    expect(at(CAP.to) - at(CAP.from)).toBeGreaterThan(0.6 * (CAP.to - CAP.from) * 1e6);
    expect(at(CAP.from)).toBe(0);
    expect(at(2 * HOUR)).toBe(at(CAP.to + MINUTE));
    expect(peerAt(2 * HOUR)).toBe(0);
  });

  it("reads the same under the cap at a 15 s and a 60 s cadence", () => {
    const coarse = readEvery(MINUTE);
    for (const t of [CAP.from - MINUTE, CAP.from + 5 * MINUTE, CAP.from + 31 * MINUTE, CAP.to + MINUTE])
      expect(coarse.get(t), `${t}`).toEqual(fine.get(t));
  });
});
