/**
 * The slow-job journey's data-loader case (data-starved.yaml): a training job capped below the
 * CPU its input pipeline needs. Its GPUs are allocated but wait for data (DCGM), its container
 * runs at its CPU limit the whole time (cAdvisor), and the limit is what kube-state-metrics and
 * Run:ai report; its neighbour, fed, keeps its GPUs busy.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type Frame, type Sample } from "@gpusynth/constructs";
import { describe, expect, it } from "vitest";
import { allSamples } from "./family-index.js";

const MINUTE = 60_000;
const { blueprint } = loadBlueprint(fileURLToPath(new URL("../../../blueprints/scenarios/data-starved.yaml", import.meta.url)));

describe("a training job whose data loader is starved of CPU (data-starved.yaml)", () => {
  /** Per frame, the values this test reads, taken as each frame comes. */
  const frames: { t: number; samples: Sample[] }[] = [];
  const wanted = new Set([
    "DCGM_FI_DEV_GPU_UTIL",
    "container_cpu_usage_seconds_total",
    "container_cpu_cfs_periods_total",
    "container_cpu_cfs_throttled_periods_total",
    "container_cpu_cfs_throttled_seconds_total",
    "container_spec_cpu_quota",
    "kube_pod_container_resource_limits",
    "runai_cpu_limits_per_active_workload",
    "runai_job_cpu_usage",
    "node_cpu_seconds_total",
    "node_load5",
  ]);
  drive(new ClusterRun(blueprint), every(15_000, { fromMs: 60 * MINUTE, toMs: 180 * MINUTE, atStart: true }), (frame: Frame) =>
    frames.push({ t: frame.simulatedMs, samples: allSamples(frame.targets).filter((s) => wanted.has(s.family.name)) }),
  );
  const first = frames[0] as { t: number; samples: Sample[] };
  const last = frames.at(-1) as { t: number; samples: Sample[] };
  const of = (samples: readonly Sample[], name: string, labels: Record<string, string>) =>
    samples.filter((s) => s.family.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));

  it("keeps its GPUs busy about 40 % as often as its fed neighbour's (waiting 1 − 4/10 of every step)", () => {
    const mean = (pod: string) => {
      const values = frames.flatMap((f) => of(f.samples, "DCGM_FI_DEV_GPU_UTIL", { pod }).map((s) => s.value));
      expect(values.length).toBeGreaterThan(1000);
      return values.reduce((a, b) => a + b, 0) / values.length;
    };
    const ratio = mean("train-starved-0-0") / mean("train-fed-0-0");
    expect(ratio).toBeGreaterThan(0.3);
    expect(ratio).toBeLessThan(0.5);
  });

  it("runs its container at its CPU limit, 16 cores, the whole time, and the fed one below its request", () => {
    const cores = (pod: string) => {
      const counter = frames.map(
        (f) => of(f.samples, "container_cpu_usage_seconds_total", { pod, container: pod.replace(/-0-0$/, "") })[0]?.value as number,
      );
      return ((counter.at(-1) as number) - (counter[0] as number)) / ((last.t - first.t) / 1000);
    };
    expect(cores("train-starved-0-0")).toBeCloseTo(16, 6);
    expect(cores("train-fed-0-0")).toBeLessThan(48);
    expect(
      of(last.samples, "container_spec_cpu_quota", { pod: "train-starved-0-0", container: "train-starved" }).map((s) => s.value),
    ).toEqual([1_600_000]);
    expect(of(last.samples, "container_spec_cpu_quota", { pod: "train-fed-0-0" })).toEqual([]);
  });

  it("is throttled in every CFS period, as kube-prometheus' CPUThrottlingHigh reads it, and its neighbour never", () => {
    const increase = (name: string, labels: Record<string, string>) => {
      const at = (f: { samples: Sample[] }) => of(f.samples, name, labels)[0]?.value ?? 0;
      return at(last) - at(first);
    };
    const starved = { pod: "train-starved-0-0", container: "train-starved" };
    const periods = increase("container_cpu_cfs_periods_total", starved);
    // Two hours of 100 ms periods.
    expect(periods).toBe(72_000);
    expect(increase("container_cpu_cfs_throttled_periods_total", starved) / periods).toBeGreaterThan(0.25);
    // Waiting for the 24 cores it wants beyond its 16, every second.
    expect(increase("container_cpu_cfs_throttled_seconds_total", starved) / 7200).toBeCloseTo(24, 6);
    expect(of(last.samples, "container_cpu_cfs_periods_total", { pod: "train-fed-0-0" })).toEqual([]);
  });

  it("reports the limit in kube-state-metrics and Run:ai, and Run:ai's CPU usage at it", () => {
    const samples = last.samples;
    expect(of(samples, "kube_pod_container_resource_limits", { pod: "train-starved-0-0", resource: "cpu" }).map((s) => s.value)).toEqual([
      16,
    ]);
    expect(of(samples, "kube_pod_container_resource_limits", { pod: "train-fed-0-0", resource: "cpu" })).toEqual([]);
    expect(of(samples, "runai_cpu_limits_per_active_workload", { job_name: "train-starved" }).map((s) => s.value)).toEqual([16]);
    expect(of(samples, "runai_job_cpu_usage", { workload_name: "train-starved" }).map((s) => s.value)).toEqual([16]);
  });

  it("shows the node far from busy at node-exporter: the limit, not the node, holds the loader back", () => {
    const busy = (f: { samples: Sample[] }) =>
      of(f.samples, "node_cpu_seconds_total", {})
        .filter((s) => s.labels.mode !== "idle" && s.labels.mode !== "iowait")
        .reduce((sum, s) => sum + s.value, 0);
    const cpus = of(last.samples, "node_cpu_seconds_total", { mode: "idle" }).length;
    const containerCores = (pod: string) => {
      const at = (f: { samples: Sample[] }) =>
        of(f.samples, "container_cpu_usage_seconds_total", { pod, container: pod.replace(/-0-0$/, "") })[0]?.value as number;
      return (at(last) - at(first)) / ((last.t - first.t) / 1000);
    };
    const busyCores = (busy(last) - busy(first)) / ((last.t - first.t) / 1000);
    const both = containerCores("train-starved-0-0") + containerCores("train-fed-0-0");
    // Both loaders' cores and what the node's agents and host daemons use besides (under two cores here).
    expect(busyCores).toBeGreaterThan(both);
    expect(busyCores - both).toBeLessThan(2);
    expect(busyCores / cpus).toBeLessThan(0.25);
    expect(of(last.samples, "node_load5", {})[0]?.value).toBeGreaterThan(both);
  });
});
