/**
 * One story, three signals: a workload that fails on a GPU fault (XID 95, uncontained ECC error)
 * is found in its Kubernetes events, the scheduler's log, dcgm-exporter's sticky XID and
 * kube-state-metrics' pod phase — all naming the same pod, node and GPU.
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type LogRecordOut, type Sample, type TargetSamples, targetsKept } from "@gpusynth/constructs";
import type { DomainEvent } from "@gpusynth/sim";
import { beforeAll, describe, expect, it } from "vitest";
import { SPAM_BURST } from "../src/kubernetes-events/event-recorder.js";

const fixture = fileURLToPath(new URL("../../sim/test/fixtures/gpu-fault.yaml", import.meta.url));
const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

describe("a workload failed by a GPU fault, across signals", () => {
  const { blueprint } = loadBlueprint(fixture);
  const victimName = blueprint.submissions[1]?.name as string; // started after the reboot, hit by the XID 95 injection
  const events: DomainEvent[] = [];
  const logs: LogRecordOut[] = [];
  let beforeFault: TargetSamples[] = [];
  let afterFault: TargetSamples[] = [];

  beforeAll(() => {
    const run = new ClusterRun(blueprint, {
      logs: true,
      observers: [(e) => events.push(e)],
      sources: ["kube-state-metrics", "dcgm-exporter"],
    });
    drive(run, every(MINUTE, { toMs: 3 * HOUR + 10 * MINUTE }), (frame) => {
      if (frame.simulatedMs === 2 * HOUR) beforeFault = targetsKept(frame.targets);
      afterFault = targetsKept(frame.targets);
      logs.push(...frame.logs);
    });
  });

  const failure = () => {
    const failed = events.find(
      (e): e is DomainEvent & { kind: "WorkloadFailed" } => e.kind === "WorkloadFailed" && e.workload.name === victimName,
    );
    if (failed === undefined || failed.cause.kind !== "GpuFault") throw new Error("the fixture's workload did not fail on a GPU fault");
    return { ...failed, cause: failed.cause };
  };
  const samples = (collected: TargetSamples[], name: string): Sample[] =>
    collected.flatMap((t) => t.samples.filter((s) => s.family.name === name));

  it("the simulation records which pod, node and GPU the XID hit", () => {
    const f = failure();
    expect(f.cause.xid).toBe(95);
    expect(f.pods.flatMap((p) => p.gpus.map((g) => g.uuid))).toContain(f.cause.gpu.uuid);
  });

  it("DCGM shows the pod on that GPU before the fault, and the sticky XID 95 with its message after", () => {
    const { cause, pods } = failure();
    const before = samples(beforeFault, "DCGM_FI_DEV_GPU_UTIL").find((s) => s.labels.UUID === cause.gpu.uuid);
    expect(before?.labels).toMatchObject({ pod: pods[0]?.name, Hostname: cause.node, gpu: String(cause.gpu.index) });
    const xid = samples(afterFault, "DCGM_FI_DEV_XID_ERRORS").find((s) => s.labels.UUID === cause.gpu.uuid);
    expect(xid?.value).toBe(95);
    expect(xid?.labels).toMatchObject({ err_code: "95", err_msg: "Uncontained ECC error", Hostname: cause.node });
  });

  it("kube-state-metrics shows the pod Failed on that node, terminated with Error", () => {
    const { cause, pods } = failure();
    const pod = pods[0]?.name as string;
    const phase = samples(afterFault, "kube_pod_status_phase").find((s) => s.labels.pod === pod && s.value === 1);
    expect(phase?.labels.phase).toBe("Failed");
    expect(samples(afterFault, "kube_pod_info").find((s) => s.labels.pod === pod)?.labels.node).toBe(cause.node);
    expect(samples(afterFault, "kube_pod_container_status_terminated_reason").find((s) => s.labels.pod === pod)?.labels.reason).toBe(
      "Error",
    );
  });

  it("Kubernetes events show the pod scheduled and bound to that node", () => {
    const { cause, pods } = failure();
    const pod = pods[0]?.name as string;
    const about = logs.filter((r) => r.receiver === "k8s_events" && r.resource["k8s.object.name"] === pod);
    const reasons = about.map((r) => r.attributes["k8s.event.reason"]);
    expect(reasons).toEqual(expect.arrayContaining(["Bound", "Created", "Started"]));
    // KAI's Scheduled shares client-go's spam bucket (25, then one per 5 minutes) with the
    // Unschedulable it recorded every second while the pod waited: it is written only if a token was left.
    if (!reasons.includes("Scheduled")) expect(reasons.filter((r) => r === "Unschedulable").length).toBeGreaterThanOrEqual(SPAM_BURST);
    for (const r of about.filter((e) => ["Scheduled", "Bound"].includes(String(e.attributes["k8s.event.reason"]))))
      expect(r.body).toContain(cause.node);
    // It had waited for the node's reboot: KAI said why, on the same pod.
    expect(about.find((r) => r.attributes["k8s.event.reason"] === "Unschedulable")?.severityText).toBe("Warning");
  });

  it("Kubernetes events show the faulted node cordoned, going down and coming back as a restarted kubelet says", () => {
    const node = logs.filter((r) => r.receiver === "k8s_events" && r.resource["k8s.object.kind"] === "Node");
    // The kubelet sees the cordon; the node controller marks the node NotReady; the new kubelet
    // starts, enforces allocatable and posts its first status (Kubernetes v1.30.2's order).
    const back = [
      "Starting",
      "NodeAllocatableEnforced",
      "Rebooted",
      "NodeHasSufficientMemory",
      "NodeHasNoDiskPressure",
      "NodeHasSufficientPID",
      "NodeReady",
    ];
    expect(node.map((r) => r.attributes["k8s.event.reason"])).toEqual(["NodeNotSchedulable", "NodeNotReady", ...back]);
    const { cause } = failure();
    expect(node.every((r) => r.resource["k8s.object.name"] === blueprint.faults.injections[0]?.node)).toBe(true);
    const at = node.map((r) => r.timeMs - blueprint.time.start);
    expect(at[0]).toBeLessThan(90 * MINUTE);
    expect(at.slice(1)).toEqual([90 * MINUTE, ...back.map(() => 100 * MINUTE)]);
    expect(cause.node).toBe(blueprint.faults.injections[0]?.node);
  });

  it("the scheduler's log shows the bind request for that pod to that node", () => {
    const { cause, pods, workload } = failure();
    const line = logs.find(
      (r) => r.receiver === "filelog" && r.body.includes(`Creating bind request for task <${workload.namespace}/${pods[0]?.name}>`),
    );
    expect(line?.body).toContain(`to node <${cause.node}>`);
    expect(line?.attributes["log.iostream"]).toBe("stderr");
  });
});
