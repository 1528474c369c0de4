/**
 * What docs/queries.md's journeys must answer, worked out from a run's domain events (the ground
 * truth) and checked against a Prometheus: shared by the scrape path (journeys.test.ts) and the
 * remote-write path (cli/test/remote-write-pipeline.test.ts), which must answer alike.
 */
import { readFileSync } from "node:fs";
import type { DomainEvent } from "@gpusynth/sim";
import { expect } from "vitest";
import type { InstantSample } from "./prometheus-server.js";

/** docs/queries.md's queries by the id in the comment above each block. */
export const documented = new Map(
  [
    ...readFileSync(new URL("../../../docs/queries.md", import.meta.url), "utf8").matchAll(
      /<!-- query: ([\w-]+) -->\n```promql\n([\s\S]*?)```/g,
    ),
  ].map((m) => [m[1] as string, (m[2] as string).trim()]),
);

/** A documented query's PromQL, by its id. */
export function documentedQuery(id: string): string {
  const query = documented.get(id);
  if (query === undefined) throw new Error(`docs/queries.md has no query "${id}"`);
  return query;
}

/**
 * The pods that ended Failed, as kube-state-metrics lists them: a gang's failed ranks
 * (RankFailed) and every pod of a workload that failed as a whole; the ranks KAI's stale-gang
 * eviction deleted are gone instead.
 */
export function podsFailedIn(events: readonly DomainEvent[]) {
  return events.flatMap((e) =>
    e.kind === "RankFailed"
      ? [{ namespace: e.workload.namespace, pod: e.pod, cause: e.cause }]
      : e.kind === "WorkloadFailed" && e.staleGang === undefined
        ? e.pods.map((p) => ({ namespace: e.workload.namespace, pod: p, cause: e.cause }))
        : [],
  );
}

/** A documented query, by its id, sent to one Prometheus. */
export type DocumentedQuery = (id: string) => Promise<InstantSample[]>;

/** The samples as sorted rows of the given labels' values. */
export const rows = (samples: InstantSample[], labels: readonly string[]): string[] =>
  samples.map((s) => labels.map((l) => s.metric[l] ?? "").join(" ")).sort();

/** crash-loop.yaml: the restarting pod with the kubelet's restart count, and no other pod. */
export async function expectRestartsFound(events: readonly DomainEvent[], query: DocumentedQuery): Promise<void> {
  const restarted = events.flatMap((e) => (e.kind === "ContainerRestarted" ? [e] : []));
  const last = new Map(restarted.flatMap((e) => e.pods.map((p) => [`${e.workload.namespace} ${p.name}`, e.restarts] as const)));
  expect([...last.values()]).toEqual([6]);
  const found = await query("restarting-pods");
  expect(Object.fromEntries(found.map((s) => [`${s.metric.namespace} ${s.metric.pod}`, Number(s.value[1])]))).toEqual(
    Object.fromEntries(last),
  );
}

/** memory-pressure.yaml: the pod the kubelet evicted, and the node that was under pressure. */
export async function expectMemoryEvictionFound(events: readonly DomainEvent[], query: DocumentedQuery): Promise<void> {
  const pressure = events.flatMap((e) => (e.kind === "NodeMemoryPressure" ? [e] : []));
  expect(pressure.length).toBe(1);
  const [{ node, victim }] = pressure as [(typeof pressure)[number]];
  expect(rows(await query("evicted-pods"), ["namespace", "pod"])).toEqual([`${victim?.workload.namespace} ${victim?.pod.name}`]);
  expect(rows(await query("nodes-under-pressure"), ["node", "condition"])).toEqual([`${node} MemoryPressure`]);
}
