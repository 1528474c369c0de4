/**
 * The kubelet's cAdvisor endpoint as a platform team reads it next to kube-state-metrics: every
 * running container of a node has a cgroup whose container ID is the one kube-state-metrics
 * reports, it appears when its image is in and goes when it stops, a restart is a new container
 * counting from zero, counters only grow, and no node uses more CPU or memory than it has.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint, nodeCpus, nodeName } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type Frame, frameKept, type Sample } from "@gpusynth/constructs";
import { describe, expect, it } from "vitest";
import { allSamples } from "./family-index.js";

const MINUTE = 60_000;
const load = (path: string) => loadBlueprint(fileURLToPath(new URL(path, import.meta.url))).blueprint;

const byName = (frame: Frame, name: string): Sample[] => allSamples(frame.targets).filter((s) => s.family.name === name);
/** The containers' cgroups (the pods' have no container label). */
const containers = (samples: readonly Sample[]) => samples.filter((s) => s.labels.container !== undefined);

describe("cAdvisor through a crash loop (crash-loop.yaml)", () => {
  const blueprint = load("../../../blueprints/scenarios/crash-loop.yaml");
  const frames: Frame[] = [];
  drive(
    new ClusterRun(blueprint, { sources: ["kubelet", "kube-state-metrics"] }),
    every(15_000, { toMs: 45 * MINUTE, atStart: true }),
    (frame) => frames.push(frameKept(frame)),
  );

  it("lists each running container under the ID kube-state-metrics gives it, and nothing else of the users'", () => {
    let compared = 0;
    for (const frame of frames) {
      const ksm = new Map(
        byName(frame, "kube_pod_container_info").map((s) => [`${s.labels.namespace}/${s.labels.pod}`, s.labels.container_id as string]),
      );
      for (const s of containers(byName(frame, "container_start_time_seconds")).filter((x) => x.labels.namespace === "runai-vision")) {
        expect(`containerd://${s.labels.name}`, `${s.labels.pod} at ${frame.simulatedMs / MINUTE} min`).toBe(
          ksm.get(`runai-vision/${s.labels.pod}`),
        );
        expect(s.labels.id).toMatch(new RegExp(`/kubepods-burstable-pod[0-9a-f_]{36}\\.slice/cri-containerd-${s.labels.name}\\.scope$`));
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(100);
  });

  it("shows a container only once its image is in, and a restart as a new container counting from zero", () => {
    const cpu = (frame: Frame, pod: string) =>
      containers(byName(frame, "container_cpu_usage_seconds_total")).filter((s) => s.labels.pod === pod);
    // The first pod on the node pulls the image for 31 s: no cgroup in the first frame after the bind.
    const first = frames.find((f) => f.view.running.some((w) => w.name === "train-ok")) as Frame;
    expect(cpu(first, "train-ok-0-0")).toEqual([]);
    const ids = new Set<string>();
    let restartsSeen = 0;
    let previous: Sample | undefined;
    for (const frame of frames) {
      const [now] = cpu(frame, "train-bad-0-0");
      if (now === undefined) continue;
      if (previous !== undefined && now.labels.name !== previous.labels.name) {
        restartsSeen++;
        // A new container's counter starts again below where the last one was.
        expect(now.value).toBeLessThan(previous.value);
      } else if (previous !== undefined) expect(now.value).toBeGreaterThanOrEqual(previous.value);
      ids.add(now.labels.name as string);
      previous = now;
    }
    expect(restartsSeen).toBeGreaterThanOrEqual(3);
    expect(ids.size).toBe(restartsSeen + 1);
  });
});

describe("cAdvisor across the lab cluster for two hours (lab.yaml)", () => {
  const blueprint = load("../../../blueprints/lab.yaml");
  const frames: Frame[] = [];
  drive(
    new ClusterRun(blueprint, { seed: 3, sources: ["kubelet"] }),
    every(MINUTE, { fromMs: 6 * 60 * MINUTE, toMs: 8 * 60 * MINUTE, atStart: true }),
    (frame) => frames.push(frameKept(frame)),
  );
  const nodes = blueprint.nodePools.flatMap((pool) => Array.from({ length: pool.nodes }, (_, i) => ({ name: nodeName(pool, i), pool })));
  const cpusOf = new Map(nodes.map(({ name, pool }) => [name, nodeCpus(pool)]));
  const memoryOf = new Map(nodes.map(({ name, pool }) => [name, pool.memoryGiB * 2 ** 30]));

  it("uses no more CPU on a node than it has, and some on every busy one", () => {
    const off: string[] = [];
    let busy = 0;
    for (let i = 1; i < frames.length; i++) {
      const [before, after] = [frames[i - 1] as Frame, frames[i] as Frame];
      for (const target of after.targets.filter((t) => t.target.path === "/metrics/cadvisor")) {
        const node = target.target.node as string;
        const was = new Map(
          (before.targets.find((t) => t.target.path === "/metrics/cadvisor" && t.target.node === node)?.samples ?? [])
            .filter((s) => s.family.name === "container_cpu_usage_seconds_total")
            .map((s) => [s.labels.name, s.value]),
        );
        // Cores used over the minute by the containers that ran through it.
        let cores = 0;
        for (const s of containers(target.samples.filter((x) => x.family.name === "container_cpu_usage_seconds_total"))) {
          const previous = was.get(s.labels.name);
          if (previous === undefined) continue;
          if (s.value < previous) off.push(`${node}/${s.labels.name}: the CPU counter fell from ${previous} to ${s.value}`);
          cores += (s.value - previous) / 60;
        }
        if (!(cores < (cpusOf.get(node) as number))) off.push(`${node}: ${cores} cores used of ${cpusOf.get(node)}`);
        if (cores > 1) busy++;
      }
    }
    expect(off.slice(0, 5)).toEqual([]);
    expect(busy).toBeGreaterThan(0);
  });

  it("keeps each container's working set within its usage and every node's within its memory", () => {
    const off: string[] = [];
    for (const frame of frames) {
      for (const target of frame.targets.filter((t) => t.target.path === "/metrics/cadvisor")) {
        const of = (name: string) =>
          new Map(containers(target.samples.filter((s) => s.family.name === name)).map((s) => [s.labels.name, s.value]));
        const usage = of("container_memory_usage_bytes");
        const workingSet = of("container_memory_working_set_bytes");
        const rss = of("container_memory_rss");
        let total = 0;
        for (const [name, ws] of workingSet) {
          const used = usage.get(name) as number;
          if (!(ws <= used)) off.push(`${name}: working set ${ws} over usage ${used}`);
          if (!((rss.get(name) as number) <= ws)) off.push(`${name}: RSS ${rss.get(name)} over working set ${ws}`);
          total += used;
        }
        const node = target.target.node as string;
        if (!(total < (memoryOf.get(node) as number))) off.push(`${node}: ${total} bytes in use of ${memoryOf.get(node)}`);
      }
    }
    expect(off.slice(0, 5)).toEqual([]);
  });
});

describe("Run:ai's CPU and memory families beside cAdvisor (lab.yaml)", () => {
  const blueprint = load("../../../blueprints/lab.yaml");
  // The afternoon of the first day: the lab is busy.
  const at = 14 * 60 * MINUTE;
  // Two frames a second apart: cAdvisor's counter over that second is the rate Run:ai reports.
  // Each frame's counters are read as it comes (a run may reuse a frame's objects).
  const counters: Map<string | undefined, number>[] = [];
  const frames: Frame[] = [];
  drive(
    new ClusterRun(blueprint, { seed: 5, sources: ["kubelet", "runai"] }),
    [at, at + 1_000].map((t) => t as Frame["simulatedMs"]),
    (frame) => {
      counters.push(new Map(containers(byName(frame, "container_cpu_usage_seconds_total")).map((s) => [s.labels.pod, s.value])));
      frames.push(frameKept(frame));
    },
  );
  const after = frames[1] as Frame;
  const all = (frame: Frame, name: string) => byName(frame, name);

  it("reports each workload's memory as the working set of its pods' containers", () => {
    const workingSet = new Map(containers(all(after, "container_memory_working_set_bytes")).map((s) => [s.labels.pod, s.value]));
    const used = all(after, "runai_job_memory_used_bytes");
    expect(used.length).toBe(after.view.running.length);
    expect(used.length).toBeGreaterThan(3);
    for (const s of used) {
      const w = after.view.running.find((x) => x.uid === s.labels.workload_id);
      const pods = w?.pods.map((p) => p.name) ?? [];
      expect(s.value, s.labels.workload_name).toBe(pods.reduce((n, pod) => n + (workingSet.get(pod) ?? 0), 0));
    }
  });

  it("reports each workload's CPU as the rate of its containers' CPU counters", () => {
    const [was, is] = counters as [Map<string | undefined, number>, Map<string | undefined, number>];
    let compared = 0;
    for (const s of all(after, "runai_job_cpu_usage")) {
      const w = after.view.running.find((x) => x.uid === s.labels.workload_id);
      const rate = (w?.pods ?? []).reduce((n, p) => n + ((is.get(p.name) ?? 0) - (was.get(p.name) ?? 0)), 0);
      if (rate === 0) continue;
      expect(s.value, s.labels.workload_name).toBeCloseTo(rate, 1);
      compared++;
    }
    expect(compared).toBeGreaterThan(0);
  });

  it("puts a node's used memory at the sum of its containers' working sets, and within the node", () => {
    for (const s of all(after, "runai_node_used_memory_bytes")) {
      const kubelet = after.targets.find((t) => t.target.path === "/metrics/cadvisor" && t.target.node === s.labels.node);
      const sum = containers(kubelet?.samples.filter((x) => x.family.name === "container_memory_working_set_bytes") ?? []).reduce(
        (n, x) => n + x.value,
        0,
      );
      expect(s.value, s.labels.node).toBe(sum);
      const utilization = all(after, "runai_node_memory_utilization").find((u) => u.labels.node === s.labels.node)?.value as number;
      expect(utilization).toBeGreaterThan(0);
      expect(utilization).toBeLessThan(1);
    }
  });
});
