/**
 * node-exporter's view of each node, as a platform team reads it beside the kubelet's: every
 * logical CPU counted once with its modes adding up to the node's uptime, the node's busy time
 * holding every container's CPU time cAdvisor reports, memory that holds the containers' working
 * sets within the capacity the kubelet lists, and a reboot that starts the counters again. Runs
 * gpu-fault.yaml (node 0 reboots at 03:30, Ready at 03:40) with node-exporter switched on.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type Frame, type Sample, samplesKept } from "@gpusynth/constructs";
import { describe, expect, it } from "vitest";
import { allSamples, familyIndex } from "./family-index.js";

const MINUTE = 60_000;
const loaded = loadBlueprint(fileURLToPath(new URL("../../../blueprints/scenarios/gpu-fault.yaml", import.meta.url))).blueprint;
const blueprint = { ...loaded, telemetry: { ...loaded.telemetry, nodeExporter: true } };
const NODE = "train-node-0";

interface Taken {
  readonly t: number;
  /** Per node: its node-exporter samples, and its cAdvisor samples (none while it reboots). */
  readonly node: ReadonlyMap<string, readonly Sample[]>;
  readonly cadvisor: ReadonlyMap<string, readonly Sample[]>;
  readonly ksm: readonly Sample[];
}

const frames: Taken[] = [];
drive(
  new ClusterRun(blueprint, { sources: ["node-exporter", "kubelet", "kube-state-metrics"] }),
  every(15_000, { fromMs: 170 * MINUTE, toMs: 250 * MINUTE, atStart: true }),
  (frame: Frame) => {
    const byNode = (job: string, path = "/metrics") =>
      new Map(
        frame.targets
          .filter((t) => t.target.job === job && t.target.path === path)
          .map((t) => [t.target.node as string, samplesKept(t.samples)]),
      );
    frames.push({
      t: frame.simulatedMs,
      node: byNode("node-exporter"),
      cadvisor: byNode("kubelet", "/metrics/cadvisor"),
      ksm: allSamples(frame.targets.filter((t) => t.target.job === "kube-state-metrics")),
    });
  },
);

/** Each target's samples by family, indexed once: the checks read a family of each target many times. */
const familyOf = familyIndex((samples: readonly Sample[]) => [samples]);
const of = (samples: readonly Sample[] | undefined, name: string, labels: Record<string, string> = {}) =>
  familyOf(samples ?? [], name).filter((s) => Object.entries(labels).every(([k, v]) => s.labels[k] === v));
const value = (samples: readonly Sample[] | undefined, name: string, labels: Record<string, string> = {}) => {
  const found = of(samples, name, labels);
  if (found.length !== 1) throw new Error(`${found.length} series of ${name} ${JSON.stringify(labels)}, not one`);
  return (found[0] as Sample).value;
};
/** Seconds of a node's CPUs in the modes that are busy (not idle, not waiting on I/O). */
const busySeconds = (samples: readonly Sample[] | undefined) =>
  of(samples, "node_cpu_seconds_total")
    .filter((s) => s.labels.mode !== "idle" && s.labels.mode !== "iowait")
    .reduce((sum, s) => sum + s.value, 0);
/** cAdvisor's CPU seconds per container cgroup on a node, by container ID. */
const containerSeconds = (samples: readonly Sample[] | undefined) =>
  new Map(
    of(samples, "container_cpu_usage_seconds_total").flatMap((s) => (s.labels.container === undefined ? [] : [[s.labels.name, s.value]])),
  );

describe("node-exporter on every node (gpu-fault.yaml with telemetry.nodeExporter)", () => {
  const before = frames[0] as Taken;
  const afterReboot = frames.at(-1) as Taken;

  it("counts each node's logical CPUs and its memory as the kubelet's capacity lists them", () => {
    for (const [node, samples] of before.node) {
      const idle = of(samples, "node_cpu_seconds_total", { mode: "idle" });
      expect(idle.length).toBe(value(before.ksm, "kube_node_status_capacity", { node, resource: "cpu" }));
      expect(new Set(idle.map((s) => s.labels.cpu)).size).toBe(idle.length);
      expect(value(samples, "node_memory_MemTotal_bytes")).toBe(
        value(before.ksm, "kube_node_status_capacity", { node, resource: "memory" }),
      );
    }
  });

  it("adds up each CPU's modes to its uptime, and never runs a counter backwards while the node is up", () => {
    for (let i = 1; i < frames.length; i++) {
      const [a, b] = [frames[i - 1] as Taken, frames[i] as Taken];
      for (const [node, now] of b.node) {
        const then = a.node.get(node);
        if (then === undefined || value(then, "node_boot_time_seconds") !== value(now, "node_boot_time_seconds")) continue;
        const [cpuThen, cpuNow] = [of(then, "node_cpu_seconds_total"), of(now, "node_cpu_seconds_total")];
        expect(cpuNow.length).toBe(cpuThen.length);
        // Per CPU, the time its modes gained; and any counter that went backwards (expect once per scrape, not per series).
        const elapsedByCpu = new Map<string, number>();
        const backwards: string[] = [];
        cpuNow.forEach((s, i) => {
          const earlier = cpuThen[i] as Sample;
          const cpu = s.labels.cpu as string;
          if (earlier.labels.cpu !== cpu || earlier.labels.mode !== s.labels.mode) backwards.push(`${node} series ${i} moved`);
          if (s.value < earlier.value) backwards.push(`${node} cpu ${cpu} ${s.labels.mode}`);
          elapsedByCpu.set(cpu, (elapsedByCpu.get(cpu) ?? 0) + s.value - earlier.value);
        });
        expect(backwards).toEqual([]);
        // Eight counters of hundredths of a second, each rounded: within 0.04 s of the 15 s between scrapes.
        const off = [...elapsedByCpu].filter(([, elapsed]) => Math.abs(elapsed - (b.t - a.t) / 1000) >= 0.045);
        expect(off).toEqual([]);
      }
    }
  });

  it("counts /proc/vmstat's pages and faults up from boot: never backwards while the node is up, from zero again after it reboots", () => {
    const fields = ["node_vmstat_pgfault", "node_vmstat_pgmajfault", "node_vmstat_pgpgin", "node_vmstat_pgpgout", "node_vmstat_oom_kill"];
    const backwards: string[] = [];
    for (let i = 1; i < frames.length; i++) {
      const [a, b] = [frames[i - 1] as Taken, frames[i] as Taken];
      for (const [node, now] of b.node) {
        const then = a.node.get(node);
        if (then === undefined || value(then, "node_boot_time_seconds") !== value(now, "node_boot_time_seconds")) continue;
        for (const field of fields) if (value(now, field) < value(then, field)) backwards.push(`${node} ${field} at ${b.t}`);
      }
    }
    expect(backwards).toEqual([]);
    // Node 0 up for months before its reboot, minutes after it.
    expect(value(afterReboot.node.get(NODE), "node_vmstat_pgfault")).toBeLessThan(
      value(before.node.get(NODE), "node_vmstat_pgfault") / 100,
    );
    for (const [, samples] of before.node) expect(value(samples, "node_vmstat_pswpin") + value(samples, "node_vmstat_pswpout")).toBe(0);
  });

  it("holds every container's CPU time in the node's busy time, with less than a core besides", () => {
    let compared = 0;
    for (let i = 1; i < frames.length; i++) {
      const [a, b] = [frames[i - 1] as Taken, frames[i] as Taken];
      for (const [node, now] of b.node) {
        const [then, cNow, cThen] = [a.node.get(node), containerSeconds(b.cadvisor.get(node)), containerSeconds(a.cadvisor.get(node))];
        // Only where the same containers ran through the interval: a counter cAdvisor starts or drops is not an interval's use.
        if (then === undefined || cNow.size !== cThen.size || [...cNow.keys()].some((id) => !cThen.has(id))) continue;
        const containers = [...cNow].reduce((sum, [id, v]) => sum + v - (cThen.get(id) as number), 0);
        const busy = busySeconds(now) - busySeconds(then);
        const seconds = (b.t - a.t) / 1000;
        expect(busy).toBeGreaterThanOrEqual(containers - 0.05 * 8);
        expect(busy - containers).toBeLessThan(seconds);
        compared++;
      }
    }
    expect(compared).toBeGreaterThan(400);
  });

  it("keeps the containers' working sets within what the node has in use", () => {
    for (const frame of [before, afterReboot])
      for (const [node, samples] of frame.node) {
        const total = value(samples, "node_memory_MemTotal_bytes");
        const available = value(samples, "node_memory_MemAvailable_bytes");
        const free = value(samples, "node_memory_MemFree_bytes");
        expect(free).toBeLessThan(available);
        expect(available).toBeLessThan(total);
        const workingSets = of(frame.cadvisor.get(node), "container_memory_working_set_bytes")
          .filter((s) => s.labels.container !== undefined)
          .reduce((sum, s) => sum + s.value, 0);
        expect(workingSets).toBeGreaterThan(0);
        expect(total - available).toBeGreaterThan(workingSets);
        expect(value(samples, "node_memory_SwapTotal_bytes")).toBe(0);
      }
  });

  it("is gone while node 0 reboots, and back with a new boot time and counters started again", () => {
    const rebooting = frames.find((f) => f.t === 215 * MINUTE) as Taken;
    expect(rebooting.node.has(NODE)).toBe(false);
    expect(rebooting.node.has("train-node-1")).toBe(true);
    const bootBefore = value(before.node.get(NODE), "node_boot_time_seconds");
    const bootAfter = value(afterReboot.node.get(NODE), "node_boot_time_seconds");
    const start = Date.parse("2026-01-07T08:00:00Z") / 1000;
    expect(bootAfter).toBeGreaterThan(bootBefore);
    // Rebooted at 03:30, Ready at 03:40: booted in between, a minute before Ready.
    expect(bootAfter).toBeGreaterThan(start + 210 * 60);
    expect(bootAfter).toBeLessThanOrEqual(start + 220 * 60 - 60);
    // Uptime since the new boot: each CPU's modes add up to it.
    const now = start + afterReboot.t / 1000;
    const cpu0 = of(afterReboot.node.get(NODE), "node_cpu_seconds_total", { cpu: "0" }).reduce((sum, s) => sum + s.value, 0);
    expect(Math.abs(cpu0 - (now - bootAfter))).toBeLessThan(1);
    expect(value(afterReboot.node.get("train-node-1"), "node_boot_time_seconds")).toBe(
      value(before.node.get("train-node-1"), "node_boot_time_seconds"),
    );
  });

  it("drops the container of the gang's failed rank from cAdvisor and the node's busy time (01:00), while the node stays up", () => {
    // Node 1 holds nothing after the distributed job's rank there failed on XID 95.
    const node1 = before.cadvisor.get("train-node-1") ?? [];
    expect(of(node1, "container_cpu_usage_seconds_total", { pod: "pretrain-worker-0" })).toEqual([]);
    const [a, b] = [frames[0] as Taken, frames[1] as Taken];
    const busyCores = (busySeconds(b.node.get("train-node-1")) - busySeconds(a.node.get("train-node-1"))) / ((b.t - a.t) / 1000);
    // Its system pods and host daemons only: under two cores of its 224.
    expect(busyCores).toBeLessThan(2);
  });

  it("runs its pod on every node in monitoring, on the host network, as kube-state-metrics lists it", () => {
    const pods = of(before.ksm, "kube_pod_info", { namespace: "monitoring" });
    expect(pods.map((s) => s.labels.node).sort()).toEqual([...before.node.keys()].sort());
    for (const pod of pods) {
      expect(pod.labels.pod).toMatch(/^node-exporter-[a-z0-9]{5}$/);
      expect(pod.labels.pod_ip).toBe(pod.labels.host_ip);
    }
  });
});
