/**
 * The product's one worker-thread mechanism (workers/thread.ts), as the shard workers and the
 * inventory pool rely on it: calls in order, immediate calls between them, events before their
 * call's reply, a worker's error or crash reaching the caller, and closing that cannot hang.
 */
import { describe, expect, it } from "vitest";
import { WorkerThread } from "../src/workers/thread.js";

type EchoCalls = {
  slow(ms: number): string[];
  quick(text: string): string;
  count(n: number): number;
  fail(text: string): never;
  crash(x: null): never;
  hang(x: null): never;
};

const script = new URL("./fixtures/echo-worker.mjs", import.meta.url);

function echo(onEvent?: (n: number) => void, onFailure?: (error: Error) => void): WorkerThread<EchoCalls, number> {
  return new WorkerThread<EchoCalls, number>(script, {
    name: "echo",
    data: undefined,
    ...(onEvent === undefined ? {} : { onEvent }),
    ...(onFailure === undefined ? {} : { onFailure }),
  });
}

describe("a worker thread", () => {
  it("answers calls in the order they were made, and an immediate call between them", async () => {
    const thread = echo();
    try {
      const first = thread.call("slow", 150);
      const second = thread.call("slow", 1);
      // Made after both, answered before the first ends: the worker does not wait for the queue.
      expect(await thread.call("quick", "between")).toBe("between");
      expect(await first).toEqual(["quick between", "slow 150"]);
      expect(await second).toEqual(["quick between", "slow 150", "slow 1"]);
    } finally {
      await thread.close(1_000);
    }
  });

  it("delivers a call's events before its reply", async () => {
    const events: number[] = [];
    const thread = echo((n) => events.push(n));
    try {
      const reply = await thread.call("count", 5);
      expect(reply).toBe(5);
      expect(events).toEqual([0, 1, 2, 3, 4]);
    } finally {
      await thread.close(1_000);
    }
  });

  it("rejects a call that throws with the worker's message and names the worker", async () => {
    const failures: Error[] = [];
    const thread = echo(undefined, (error) => failures.push(error));
    try {
      await expect(thread.call("fail", "disk full")).rejects.toThrow(/^echo: Error: disk full/);
      expect(failures).toHaveLength(1);
      // A failed worker answers nothing more: the run it belongs to stops.
      await expect(thread.call("quick", "after")).rejects.toThrow(/disk full/);
    } finally {
      await thread.close(1_000);
    }
  });

  it("rejects the call in flight when the worker exits, and reports it once", async () => {
    const failures: Error[] = [];
    const thread = echo(undefined, (error) => failures.push(error));
    try {
      await expect(thread.call("crash", null)).rejects.toThrow(/echo: the worker exited with code 3/);
      expect(failures).toHaveLength(1);
    } finally {
      await thread.close(1_000);
    }
  });

  it("closes a worker busy forever within the wait it is given", async () => {
    const thread = echo();
    const hung = thread.call("hang", null);
    hung.catch(() => {});
    await thread.close(50);
    await expect(hung).rejects.toThrow(/exited/);
  });
});
