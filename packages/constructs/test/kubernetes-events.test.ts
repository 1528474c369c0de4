/** Kubernetes events for a workload's life, from the preemption-storm scenario. */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type LogRecordOut } from "@gpusynth/constructs";
import { beforeAll, describe, expect, it } from "vitest";
import { goDuration } from "../src/kubernetes-events/events.js";

const scenario = fileURLToPath(new URL("../../../blueprints/scenarios/preemption-storm.yaml", import.meta.url));

describe("Kubernetes events in the preemption-storm scenario", () => {
  const { blueprint } = loadBlueprint(scenario);
  const records: LogRecordOut[] = [];
  beforeAll(() => {
    const run = new ClusterRun(blueprint, { metrics: false, readsGpus: false, logs: { events: true, scheduler: false } });
    drive(run, every(60_000, { toMs: 70 * 60_000 }), (frame) => records.push(...frame.logs));
  });
  const about = (pod: string) =>
    records
      .filter((r) => r.resource["k8s.object.name"] === pod)
      .map((r) => [r.attributes["k8s.event.reason"], r.timeMs - blueprint.time.start]);
  const image = blueprint.images[0];

  it("walks a pod through Scheduled, Bound, the image pull, Created and Started", () => {
    const pod = `${blueprint.submissions[0]?.name}-0-0`;
    expect(about(pod).slice(0, 6)).toEqual([
      ["Scheduled", 1_000],
      ["Bound", 1_000],
      ["Pulling", 1_000],
      ["Pulled", 1_000 + (image?.pullTime ?? 0)],
      ["Created", 1_000 + (image?.pullTime ?? 0)],
      ["Started", 1_000 + (image?.pullTime ?? 0)],
    ]);
  });

  it("makes one Event object per object, reason and message, named from the moment it was made", () => {
    // client-go keys an Event object by (source, object, type, reason, message) and names it
    // <object>.<hex UnixNano of its making>: Scheduled, Bound and Pulling of one pod in one
    // millisecond are three objects; a patched event keeps its name.
    const objects = new Map<string, Set<string>>();
    for (const r of records) {
      const name = r.attributes["k8s.event.name"] as string;
      const identity = `${r.resource["k8s.object.uid"]}|${r.attributes["k8s.event.reason"]}|${r.body}`;
      objects.set(name, new Set([...(objects.get(name) ?? []), identity]));
      const nanos = BigInt(`0x${name.slice(name.lastIndexOf(".") + 1)}`);
      expect(nanos % 1_000_000_000n, name).not.toBe(0n);
      expect(r.attributes["k8s.event.uid"]).toBeDefined();
    }
    expect(objects.size).toBeGreaterThan(20);
    for (const [name, identities] of objects) expect(identities.size, name).toBe(1);
    const uids = new Map<string, string>();
    for (const r of records) uids.set(r.attributes["k8s.event.uid"] as string, r.attributes["k8s.event.name"] as string);
    expect(uids.size).toBe(objects.size);
  });

  it("finds the image already present on a node that pulled it before", () => {
    const ownerPod = `${blueprint.submissions[4]?.name}-0-0`;
    const pulled = records.find((r) => r.resource["k8s.object.name"] === ownerPod && r.attributes["k8s.event.reason"] === "Pulled");
    expect(pulled?.body).toBe(`Container image "${image?.name}" already present on machine`);
  });

  it("records the reclaim as Evict on the victim's pod group, then the kubelet's Killing", () => {
    const evict = records.find((r) => r.attributes["k8s.event.reason"] === "Evict");
    expect(evict?.resource["k8s.object.kind"]).toBe("PodGroup");
    expect(evict?.body).toMatch(
      // Queue resources as *ResourceRequirements print them; queues have GPU quotas only.
      /^Pod runai-borrower\/\S+ was preempted by workload runai-owner\/pg-owner-\d-[0-9a-f-]+\.\nborrower-shared uses <GPU: \d+, CPU: [\d.]+ \(cores\), memory: [\d.]+ \(GB\)> with a quota of <GPU: 8, CPU: Unlimited \(cores\), memory: Unlimited \(GB\)>, fair-share of <GPU: \d+, CPU: [\d.]+ \(cores\), memory: [\d.]+ \(GB\)> and queue priority of <100>\.\nowner-shared uses </,
    );
    const killing = records.find((r) => r.attributes["k8s.event.reason"] === "Killing" && r.timeMs === evict?.timeMs);
    expect(killing?.resource["k8s.node.name"]).not.toBe("");
    expect(killing?.resource["k8s.object.fieldpath"]).toMatch(/^spec\.containers\{borrow-.\}$/);
  });
});

describe("goDuration (Go's time.Duration String)", () => {
  it.each([
    [0, "0s"],
    [890, "890ms"],
    [27_880, "27.88s"],
    [60_000, "1m0s"],
    [65_500, "1m5.5s"],
    [3_723_000, "1h2m3s"],
  ])("%i ms → %s", (ms, text) => expect(goDuration(ms)).toBe(text));
});
