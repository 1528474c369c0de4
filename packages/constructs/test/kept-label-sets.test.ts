/**
 * A series keeps its label set — the object encoders keep its encoded bytes in — from one collect
 * to the next while its subject is collected: by a key naming the subject, until a collect does
 * not meet it; by the simulation's own object for it (a GPU), for as long as the object lives.
 */
import { describe, expect, it } from "vitest";
import { KeptLabelSets, type MetricFamily } from "../src/catalogue.js";

const FAMILY: MetricFamily = { id: "test.family", name: "test_family", type: "gauge", help: "", labels: ["node", "gpu"] };
const OTHER: MetricFamily = { ...FAMILY, id: "test.other", name: "test_other" };

describe("kept label sets", () => {
  it("keep a keyed subject's label set while collects meet it, and forget it after one that does not", () => {
    const kept = new KeptLabelSets();
    kept.startCollect();
    const first = kept.of("gpu/n1/0", FAMILY, { node: "n1", gpu: "0" });
    expect(first).toEqual({ node: "n1", gpu: "0" });
    kept.startCollect();
    expect(kept.of("gpu/n1/0", FAMILY, { node: "n1", gpu: "0" })).toBe(first);
    // A collect that does not meet the subject, then one that does: a new label set.
    kept.startCollect();
    kept.startCollect();
    const again = kept.of("gpu/n1/0", FAMILY, { node: "n1", gpu: "0" });
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });

  it("keep an object subject's label sets for as long as the object lives, each family's its own", () => {
    const kept = new KeptLabelSets();
    const gpu = { index: 0 };
    kept.startCollect();
    const sets = kept.subject(gpu);
    const a = kept.sampleIn(sets, FAMILY, { node: "n1", gpu: "0" }, 1);
    const b = kept.sampleIn(sets, OTHER, { node: "n1", gpu: "0" }, 2);
    expect(a.labels).not.toBe(b.labels);
    for (let i = 0; i < 3; i++) kept.startCollect();
    expect(kept.of(gpu, FAMILY, { node: "n1", gpu: "0" })).toBe(a.labels);
    expect(kept.sampleIn(kept.subject(gpu), OTHER, { node: "n1", gpu: "0" }, 3)).toEqual({ family: OTHER, labels: b.labels, value: 3 });
  });
});
