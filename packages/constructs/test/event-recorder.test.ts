/** The legacy event recorder's documented behaviour (client-go tools/record/events_cache.go). */
import { describe, expect, it } from "vitest";
import { COMBINED_PREFIX, type EventInput, EventRecorder, SPAM_BURST, SPAM_REFILL_MS } from "../src/kubernetes-events/event-recorder.js";

const pod = { kind: "Pod", apiVersion: "v1", namespace: "ns", name: "p", uid: "u-1", fieldPath: "" };
const event = (message: string, reason = "Unschedulable"): EventInput => ({
  source: { component: "kai-scheduler", host: "" },
  object: pod,
  type: "Warning",
  reason,
  message,
});
const SECOND = 1000;

describe("EventRecorder", () => {
  it("patches one object for identical events: count and lastTimestamp go up, name and first time stay", () => {
    const recorder = new EventRecorder();
    const first = recorder.record(event("no room"), 0);
    const second = recorder.record(event("no room"), 5 * SECOND);
    expect(first).toMatchObject({ count: 1, patch: false, firstMs: 0, lastMs: 0 });
    expect(second).toMatchObject({ count: 2, patch: true, firstMs: 0, lastMs: 5 * SECOND, name: first?.name });
    // <object>.<hex UnixNano of its making>: within the millisecond it was recorded in.
    const nanos = BigInt(`0x${first?.name.slice(2)}`);
    expect(first?.name.startsWith("p.")).toBe(true);
    expect(nanos >= 0n && nanos < 1_000_000n).toBe(true);
  });

  it("combines more than 10 similar events within 10 minutes into one object", () => {
    const recorder = new EventRecorder();
    const writes = Array.from({ length: 14 }, (_, i) => recorder.record(event(`message ${i}`), i * SECOND));
    expect(writes.slice(0, 10).every((w) => !w?.message.startsWith(COMBINED_PREFIX))).toBe(true);
    const combined = writes.slice(10);
    expect(combined.map((w) => w?.message)).toEqual(
      ["message 10", "message 11", "message 12", "message 13"].map((m) => `${COMBINED_PREFIX}${m}`),
    );
    expect(new Set(combined.map((w) => w?.name)).size).toBe(1);
    expect(combined.map((w) => w?.count)).toEqual([1, 2, 3, 4]);
  });

  it("starts aggregating afresh after 10 quiet minutes", () => {
    const recorder = new EventRecorder();
    for (let i = 0; i < 11; i++) recorder.record(event(`m${i}`), i);
    expect(recorder.record(event("later"), 11 * 60 * SECOND)?.message).toBe("later");
  });

  it("lets a burst of 25 through per source and object, then one per 5 minutes, while the count keeps counting", () => {
    const recorder = new EventRecorder();
    const written = [];
    for (let t = 0; t < 20 * 60 * SECOND; t += SECOND) {
      const w = recorder.record(event("no room"), t);
      if (w !== undefined) written.push(w);
    }
    expect(written.slice(0, SPAM_BURST).map((w) => w.lastMs)).toEqual(Array.from({ length: SPAM_BURST }, (_, i) => i * SECOND));
    const later = written.slice(SPAM_BURST);
    expect(later.length).toBe(3); // at 5, 10 and 15 minutes: the bucket refills from the start
    for (let i = 1; i < later.length; i++) expect((later[i]?.lastMs ?? 0) - (later[i - 1]?.lastMs ?? 0)).toBe(SPAM_REFILL_MS);
    const last = later[later.length - 1];
    expect(last?.count).toBe((last?.lastMs ?? 0) / SECOND + 1);
  });

  it("filters per source and object, not per reason", () => {
    const recorder = new EventRecorder();
    for (let i = 0; i < SPAM_BURST; i++) recorder.record(event("a", "Unschedulable"), i);
    expect(recorder.record(event("b", "Evict"), SPAM_BURST)).toBeUndefined();
    const other = { ...event("a"), object: { ...pod, uid: "u-2", name: "q" } };
    expect(recorder.record(other, SPAM_BURST)).toBeDefined();
  });

  it("keeps apart the same object's events from two sources, and two objects that share a UID's other fields", () => {
    const recorder = new EventRecorder();
    for (let i = 0; i < SPAM_BURST; i++) recorder.record(event("a"), i);
    const kubelet = { ...event("a"), source: { component: "kubelet", host: "node-1" } };
    expect(recorder.record(kubelet, SPAM_BURST)).toMatchObject({ count: 1, patch: false });
    // The same object seen by the same source, named differently (never so in a cluster): its own entries.
    const renamed = { ...event("a"), object: { ...pod, name: "p2" } };
    expect(recorder.record(renamed, SPAM_BURST)).toMatchObject({ count: 1, patch: false });
  });

  it("forgets an object that is gone: an event about it afterwards is a new object, with a full burst", () => {
    const recorder = new EventRecorder();
    const first = recorder.record(event("no room"), 0);
    for (let i = 1; i < 2 * SPAM_BURST; i++) recorder.record(event("no room"), i);
    expect(recorder.record(event("no room"), 2 * SPAM_BURST)).toBeUndefined();
    recorder.forget(pod.uid);
    const again = recorder.record(event("no room"), 3 * SECOND);
    expect(again).toMatchObject({ count: 1, patch: false, firstMs: 3 * SECOND });
    expect(again?.name).not.toBe(first?.name);
  });
});
