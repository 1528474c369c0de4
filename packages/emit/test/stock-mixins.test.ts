/**
 * kube-prometheus' rules and alerts for node-exporter and kube-state-metrics — each exporter's
 * mixin at its pinned release, configured as kube-prometheus v0.18.0 configures it
 * (scripts/build-tools.sh mixins renders deploy/kube-prometheus/<exporter>.jsonnet) — asked of an
 * 40 minutes of the lab pushed into a real Prometheus 3, at the simulated instants it covers: the
 * recording rules the USE dashboards read answer for every node, and calm minutes fire no alert,
 * though the alerts whose inputs gpusynth emits read real series.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtTool } from "../../cli/test/built-tools.js";
import { PrometheusServer } from "./prometheus-server.js";
import { PushedScenario } from "./pushed-scenario.js";

const MINUTE = 60_000;
const prometheus3 = builtTool("prometheus3");
const mixins = builtTool("mixins");

interface Rule {
  readonly record?: string;
  readonly alert?: string;
  readonly expr: string;
  readonly labels?: Readonly<Record<string, string>>;
}

describe.skipIf(prometheus3 === "" || mixins === "")(
  "kube-prometheus' node-exporter and kube-state-metrics rules and alerts on the lab",
  () => {
    // Every minute, as the other pushed journeys: the alerts' rate()s over 2 minutes find two points.
    const lab = new PushedScenario("blueprints/lab.yaml", 40 * MINUTE);
    const rules =
      mixins === ""
        ? []
        : ["node-exporter", "kube-state-metrics"].flatMap((exporter) =>
            (JSON.parse(readFileSync(join(dirname(mixins), `${exporter}.json`), "utf8")) as { groups: { rules: Rule[] }[] }).groups.flatMap(
              (g) => g.rules,
            ),
          );
    const nodes = lab.blueprint.nodePools.reduce((sum, pool) => sum + pool.nodes, 0);
    /**
     * A rule's expression with the series of earlier recording rules replaced by their expressions:
     * Prometheus records them as it evaluates, but the pushed minutes lie in the past of the wall
     * clock its rule evaluation follows. The mixin's selectors on a recorded series repeat its own.
     */
    const inlined = (expr: string): string =>
      rules.reduce(
        (text, r) =>
          r.record === undefined || !text.includes(r.record)
            ? text
            : text.replace(new RegExp(`${r.record.replace(/[:.]/g, "\\$&")}(\\{[^}]*\\})?`, "g"), `(${r.expr})`),
        expr,
      );
    let store: PrometheusServer;

    beforeAll(async () => {
      store = await PrometheusServer.startOtlpReceiver(prometheus3);
      await lab.run(`${store.api}/api/v1/otlp/v1/metrics`, store);
    }, 120_000);
    afterAll(async () => store?.stop());

    /** The node-exporter and kube-state-metrics families a rule reads, and whether the run emitted each. */
    const inputs = async (rule: Rule) => {
      const names = [...new Set(inlined(rule.expr).match(/(?<![:\w])(node|kube_state_metrics)_[A-Za-z0-9_]+/g) ?? [])];
      const present = await Promise.all(
        names.map(async (name) => (await store.query(`count(${name})`, lab.stamp(lab.lastScrape))).length > 0),
      );
      return { names, all: present.every(Boolean) };
    };

    it("answers the recording rules of CPU, load, memory and major faults for every node, and only those", async () => {
      const answered = new Map<string, number[]>();
      for (const rule of rules.filter((r) => r.record !== undefined)) {
        const result = await store.query(inlined(rule.expr), lab.stamp(lab.lastScrape));
        if (result.length > 0)
          answered.set(
            rule.record as string,
            result.map((s) => Number(s.value[1])),
          );
        // A rule answers exactly when node-exporter gives all it reads (disk and network are not modelled).
        expect(result.length > 0, rule.record).toBe((await inputs(rule)).all);
      }
      expect([...answered.keys()].sort()).toEqual([
        "instance:node_cpu_utilisation:rate5m",
        "instance:node_load1_per_cpu:ratio",
        "instance:node_memory_utilisation:ratio",
        "instance:node_num_cpu:sum",
        "instance:node_vmstat_pgmajfault:rate5m",
      ]);
      for (const values of answered.values()) expect(values).toHaveLength(nodes);
      // The lab's DGX A100 nodes: 128 cores with two threads each.
      expect(answered.get("instance:node_num_cpu:sum")).toEqual(Array(nodes).fill(256));
      for (const ratio of [
        ...(answered.get("instance:node_cpu_utilisation:rate5m") ?? []),
        ...(answered.get("instance:node_memory_utilisation:ratio") ?? []),
      ]) {
        expect(ratio).toBeGreaterThan(0);
        expect(ratio).toBeLessThan(1);
      }
    });

    it("fires no alert in calm minutes, while the alerts it can feed read real series", async () => {
      const fed: string[] = [];
      const firing: string[] = [];
      for (const rule of rules.filter((r) => r.alert !== undefined)) {
        const name = `${rule.alert} (${rule.labels?.severity})`;
        if ((await inputs(rule)).all) fed.push(name);
        const series = await store.queryRange(inlined(rule.expr), lab.stamp(10 * MINUTE), lab.stamp(lab.lastScrape), 60);
        if (series.length > 0) firing.push(name);
      }
      expect(firing).toEqual([]);
      expect(fed.sort()).toEqual([
        "KubeStateMetricsListErrors (critical)",
        "KubeStateMetricsShardingMismatch (critical)",
        "KubeStateMetricsShardsMissing (critical)",
        "KubeStateMetricsWatchErrors (critical)",
        "NodeCPUHighUsage (info)",
        "NodeClockNotSynchronising (warning)",
        "NodeClockSkewDetected (warning)",
        "NodeMemoryHighUtilization (warning)",
        "NodeMemoryMajorPagesFaults (warning)",
        "NodeSystemSaturation (warning)",
      ]);
    });
  },
);
