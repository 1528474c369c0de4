/**
 * One story, every source: over long runs with many seeds, what dcgm-exporter, Run:ai,
 * kube-state-metrics and the scheduler report agrees with the simulation and with each other.
 * Each run is made once and every check reads every scrape of it.
 */
import { fileURLToPath } from "node:url";
import { type GPU_MODELS, loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type Sample, type TargetSamples, xidMessage } from "@gpusynth/constructs";
import type { ClusterView } from "@gpusynth/sim";
import { describe, expect, it } from "vitest";
import { familyIndex, targetsSeries } from "./family-index.js";

const file = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const HOUR = 3_600_000;
const INTERVAL = 5 * 60_000;

/** Each scrape's samples by family name, indexed once: every check reads several families of it. */
const samplesOf = familyIndex(targetsSeries);

type Check = (view: ClusterView, collected: TargetSamples[], problems: string[]) => void;

/** The checks, by name; each call gives a fresh check with its own memory of earlier scrapes. */
const CHECKS: Readonly<Record<string, () => Check>> = {
  /** DCGM follows allocation: pod labels on exactly the GPUs running pods hold; dead GPUs and rebooting nodes report nothing. */
  follows: () => (view, collected, problems) => {
    const series = new Map<string, Sample>();
    for (const s of samplesOf(collected, "DCGM_FI_DEV_GPU_UTIL")) series.set(`${s.labels.Hostname}/${s.labels.gpu}`, s);
    for (const pool of view.pools) {
      for (const node of pool.nodes) {
        for (const gpu of node.gpus) {
          const s = series.get(`${node.name}/${gpu.index}`);
          const reporting = node.status !== "rebooting" && gpu.health === "ok";
          if (!reporting) {
            if (s !== undefined) problems.push(`${node.name}/${gpu.index} is ${node.status}/${gpu.health} but reports`);
            continue;
          }
          if (s === undefined) {
            problems.push(`${node.name}/${gpu.index} does not report`);
            continue;
          }
          if (s.labels.UUID !== gpu.uuid) problems.push(`${node.name}/${gpu.index}: UUID ${s.labels.UUID} ≠ ${gpu.uuid}`);
          const holder = gpu.holder;
          if (holder === null) {
            if (s.labels.pod !== undefined || s.labels.namespace !== undefined || s.labels.container !== undefined) {
              problems.push(`free GPU ${node.name}/${gpu.index} carries pod labels`);
            }
          } else if (s.labels.pod !== holder.name || s.labels.namespace !== holder.workload.namespace) {
            problems.push(`GPU ${node.name}/${gpu.index} held by ${holder.name} labelled ${s.labels.pod}`);
          }
        }
      }
    }
  },
  /** DCGM values stay physically consistent: framebuffer adds up, power in range, energy integrates power, XID is sticky. */
  physical: () => {
    const energy = new Map<string, { value: number; start: number; t: number; power: number }>();
    return (view, collected, problems) => {
      const byGpu = new Map<string, Map<string, Sample>>();
      for (const t of collected) {
        if (t.target.job !== "nvidia-dcgm-exporter") continue;
        for (const s of t.samples) {
          const key = s.labels.UUID as string;
          const m = byGpu.get(key) ?? new Map<string, Sample>();
          m.set(s.family.name, s);
          byGpu.set(key, m);
        }
      }
      const models = new Map(
        view.pools.flatMap((p) => p.nodes.flatMap((n) => n.gpus.map((g) => [g.uuid, { model: p.model, gpu: g }] as const))),
      );
      for (const [uuid, m] of byGpu) {
        const { model, gpu } = models.get(uuid) as {
          model: (typeof GPU_MODELS)[keyof typeof GPU_MODELS];
          gpu: (typeof view.pools)[number]["nodes"][number]["gpus"][number];
        };
        const v = (name: string) => m.get(name)?.value ?? Number.NaN;
        const fb = v("DCGM_FI_DEV_FB_USED") + v("DCGM_FI_DEV_FB_FREE") + v("DCGM_FI_DEV_FB_RESERVED");
        if (fb !== model.framebufferMiB) problems.push(`${uuid}: used + free + reserved = ${fb}, not ${model.framebufferMiB}`);
        const power = v("DCGM_FI_DEV_POWER_USAGE");
        if (power < model.idlePowerW * 0.9 || power > model.powerLimitW) problems.push(`${uuid}: power ${power} W outside idle–limit`);
        const xid = m.get("DCGM_FI_DEV_XID_ERRORS") as Sample;
        if (xid.value !== gpu.lastXid || xid.labels.err_code !== String(gpu.lastXid) || xid.labels.err_msg !== xidMessage(gpu.lastXid)) {
          problems.push(`${uuid}: XID series ${xid.value}/${xid.labels.err_code} disagrees with last XID ${gpu.lastXid}`);
        }
        const e = m.get("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION") as Sample;
        const before = energy.get(uuid);
        if (before !== undefined && before.start === e.startMs) {
          const dt = (view.now - before.t) / 1000;
          const gained = (e.value - before.value) / 1000; // joules
          // Between scrapes the counter grows by ∫P dt, the power never below the idle draw nor above the limit.
          const lo = model.idlePowerW * 0.9 * dt - 1;
          const hi = model.powerLimitW * dt + 1;
          if (gained < lo || gained > hi)
            problems.push(`${uuid}: energy grew ${gained.toFixed(0)} J in ${dt}s at ${before.power}→${power} W`);
        } else if (before !== undefined && (e.startMs ?? 0) <= before.start) {
          problems.push(`${uuid}: energy counter restarted without a new start time`);
        }
        energy.set(uuid, { value: e.value, start: e.startMs ?? 0, t: view.now, power });
      }
    };
  },
  /** Run:ai, kube-state-metrics and the scheduler count the same GPUs and pods. */
  sources: () => (view, collected, problems) => {
    const dcgmUtil = new Map(samplesOf(collected, "DCGM_FI_DEV_GPU_UTIL").map((s) => [`${s.labels.Hostname}/${s.labels.gpu}`, s]));
    for (const s of samplesOf(collected, "runai_gpu_utilization_per_gpu")) {
      const d = dcgmUtil.get(`${s.labels.node}/${s.labels.gpu}`);
      if (d?.value !== s.value) problems.push(`runai util ${s.labels.node}/${s.labels.gpu} = ${s.value}, DCGM says ${d?.value}`);
    }
    // Run:ai reads only a GPU's work (GpuActivityModel.readWork), DCGM the whole reading: the same figures.
    const dcgmFb = new Map(samplesOf(collected, "DCGM_FI_DEV_FB_USED").map((s) => [`${s.labels.Hostname}/${s.labels.gpu}`, s]));
    for (const s of samplesOf(collected, "runai_gpu_memory_used_mebibytes_per_gpu")) {
      const d = dcgmFb.get(`${s.labels.node}/${s.labels.gpu}`);
      if (d?.value !== s.value) problems.push(`runai memory used ${s.labels.node}/${s.labels.gpu} = ${s.value}, DCGM says ${d?.value}`);
    }
    const held = [...dcgmUtil.values()].filter((s) => s.labels.pod !== undefined).length;
    const sum = (name: string, filter: (s: Sample) => boolean = () => true) =>
      samplesOf(collected, name)
        .filter(filter)
        .reduce((total, s) => total + s.value, 0);
    const counts = {
      runaiPerGpu: sum("runai_allocated_gpu_count_per_gpu"),
      runaiPerPod: sum("runai_allocated_gpu_count_per_pod"),
      ksmRequestsOfRunningPods: sum(
        "kube_pod_container_resource_requests",
        (s) => s.labels.resource === "nvidia_com_gpu" && s.labels.node !== undefined && runningPod(view, s.labels.uid),
      ),
      kaiProjectQueues: view.queues.filter((q) => q.level === "project").reduce((t, q) => t + q.allocated, 0),
      kaiAllocatedMetric: sum("kai_queue_allocated_gpus") / 2, // project queues + their department queues
    };
    for (const [source, count] of Object.entries(counts))
      if (count !== held) problems.push(`${source} counts ${count} allocated GPUs, DCGM ${held}`);
    // The queue controller's CPU and memory allocation is the running pods' requests, as KSM shows them.
    for (const [resource, family] of [
      ["cpu", "kai_queue_allocated_cpu_cores"],
      ["memory", "kai_queue_allocated_memory_bytes"],
    ] as const) {
      const requested = sum(
        "kube_pod_container_resource_requests",
        (s) => s.labels.resource === resource && s.labels.node !== undefined && runningPod(view, s.labels.uid),
      );
      const allocated = sum(family) / 2; // project queues + their department queues
      if (Math.abs(allocated - requested) > 1e-3 * Math.max(1, requested))
        problems.push(`${family} sums ${allocated}, the running pods request ${requested}`);
    }
    // The users' pods, in their projects' namespaces (the system's pods run besides them).
    const users = (s: Sample) => s.labels.namespace?.startsWith("runai-") === true;
    const running = samplesOf(collected, "kube_pod_status_phase").filter(
      (s) => users(s) && s.labels.phase === "Running" && s.value === 1,
    ).length;
    const pods = view.running.reduce((t, w) => t + w.pods.length, 0);
    if (running !== pods) problems.push(`kube-state-metrics shows ${running} Running pods, the simulation ${pods}`);
    const pending = samplesOf(collected, "kube_pod_status_phase").filter(
      (s) => users(s) && s.labels.phase === "Pending" && s.value === 1,
    ).length;
    const pendingPods = view.pending.reduce((t, w) => t + w.pendingPods.length, 0);
    if (pending !== pendingPods) problems.push(`kube-state-metrics shows ${pending} Pending pods, the simulation ${pendingPods}`);
  },
};

/** The sources whose families the checks read. */
const CHECKED_SOURCES = new Set(["dcgm-exporter", "runai", "kube-state-metrics", "kai-scheduler"]);

/** Runs a blueprint once per seed, every check reading each scrape; the problems per check. */
const runs = new Map<string, Map<string, string[]>>();
function problemsOf(path: string, seed: number, hours: number, check: string): string[] {
  const key = `${path}@${seed}/${hours}`;
  let found = runs.get(key);
  if (found === undefined) {
    const { blueprint } = loadBlueprint(file(path));
    const checks = Object.entries(CHECKS).map(([name, make]) => ({ name, run: make(), problems: [] as string[] }));
    // Only the sources the checks read are collected: the kubelet's and node-exporter's are a
    // third of a frame's cost, and their agreement with the others is checked where they are
    // (kubelet-cadvisor, node-exporter).
    const run = new ClusterRun(blueprint, { seed, metrics: false, readsGpus: true });
    const sources = run.metrics.constructs.filter((c) => CHECKED_SOURCES.has(c.area));
    drive(run, every(INTERVAL, { toMs: hours * HOUR }), ({ view }) => {
      // One array for every check: samplesOf indexes it by family once.
      const collected = sources.flatMap((source) => source.collect(view));
      for (const c of checks) if (c.problems.length < 5) c.run(view, collected, c.problems);
    });
    found = new Map(checks.map((c) => [c.name, c.problems]));
    runs.set(key, found);
  }
  return found.get(check) ?? [`no check named ${check}`];
}

const RUNS = [
  { path: "packages/sim/test/fixtures/stress.yaml", seeds: [21, 22, 23], hours: 24 },
  { path: "blueprints/scenarios/preemption-storm.yaml", seeds: [1], hours: 8 },
  { path: "blueprints/lab.yaml", seeds: [4], hours: 48 },
];

describe.each(RUNS)("$path", ({ path, seeds, hours }) => {
  it.each(seeds)(
    "seed %i: DCGM follows allocation: pod labels on exactly the GPUs running pods hold; dead GPUs and rebooting nodes report nothing",
    (seed) => {
      expect(problemsOf(path, seed, hours, "follows").slice(0, 5)).toEqual([]);
    },
  );
  it.each(seeds)(
    "seed %i: DCGM values stay physically consistent: framebuffer adds up, power stays in range, energy integrates power, XID is sticky",
    (seed) => {
      expect(problemsOf(path, seed, hours, "physical").slice(0, 5)).toEqual([]);
    },
  );
  it.each(seeds)("seed %i: Run:ai, kube-state-metrics and the scheduler count the same GPUs and pods", (seed) => {
    expect(problemsOf(path, seed, hours, "sources").slice(0, 5)).toEqual([]);
  });
});

/** Whether the pod of `uid` runs in the view: each view's running pods listed once (a check asks of every pod's series). */
function runningPod(view: ClusterView, uid: string | undefined): boolean {
  let uids = runningUids.get(view);
  if (uids === undefined) {
    uids = new Set(view.running.flatMap((w) => w.pods.map((p) => p.uid)));
    runningUids.set(view, uids);
  }
  return uid !== undefined && uids.has(uid);
}
const runningUids = new WeakMap<ClusterView, Set<string>>();
