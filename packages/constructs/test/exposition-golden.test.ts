/**
 * Every construct's output for a cluster small enough to read (fixtures/one-node.yaml): each
 * scrape target's exposition at 00:30, kept in golden/<job>-<port>[-<path>].prom beside this file. A change to
 * what any construct emits shows up there, line by line, in the diff that causes it; regenerate
 * after a deliberate change with `npx vitest run packages/constructs/test/exposition-golden.test.ts -u`
 * (CI writes no golden: a missing or different one fails).
 */
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, type Frame } from "@gpusynth/constructs";
import { exposition } from "@gpusynth/emit";
import { describe, expect, it } from "vitest";

const { blueprint } = loadBlueprint(fileURLToPath(new URL("./fixtures/one-node.yaml", import.meta.url)));
const AT_MS = 30 * 60_000;

describe("the one-node cluster at 00:30, target by target", () => {
  let frame: Frame | undefined;
  drive(new ClusterRun(blueprint), every(AT_MS, { toMs: AT_MS }), (f) => {
    frame = f;
  });
  const targets = frame?.targets ?? [];

  it("has the pending job and the running ones the fixture describes", () => {
    expect(frame?.view.running.map((w) => w.name).sort()).toEqual(["notebook", "serve", "train"]);
    expect(frame?.view.pending.map((w) => w.name)).toEqual(["train-big"]);
    expect(new Set(targets.map((t) => t.target.job))).toEqual(
      new Set(["nvidia-dcgm-exporter", "kai-scheduler-default", "kube-state-metrics", "kubelet", "metrics-exporter", "queue-controller"]),
    );
  });

  for (const { target, samples } of targets) {
    // The kubelet serves two targets on one port: a path other than /metrics names the file too.
    const golden = `golden/${target.job}-${target.port}${target.path === "/metrics" ? "" : target.path.replaceAll("/", "-")}.prom`;
    it(`serves ${target.job} on :${target.port} as ${golden} holds it, again from what its label sets kept`, async () => {
      const first = exposition(samples);
      await expect(first).toMatchFileSnapshot(golden);
      expect(exposition(samples)).toBe(first);
    });
  }
});
