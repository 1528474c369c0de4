/**
 * The OTLP → Prometheus translation rules, checked on worked examples and edge cases derived
 * from the pinned translator code: prometheus/prometheus @v2.53.3
 * storage/remote/otlptranslator/prometheus/normalize_name.go and normalize_label.go,
 * prometheus/otlptranslator @v1.0.0 metric_namer.go and label_namer.go.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { loadBlueprint } from "@gpusynth/blueprint";
import { ClusterMetrics } from "@gpusynth/constructs";
import { describe, expect, it } from "vitest";
import { nameFidelityMarkdown, readReceiverNames } from "../src/commands/fidelity.js";
import {
  escapedNameWithoutSuffixes,
  escapedNameWithSuffixes,
  labelName,
  legacyName,
  type MetricKind,
  NAME_PATHS,
} from "../src/translation/prometheus-names.js";

const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const m = (name: string, kind: MetricKind, unit = "") => ({ name, kind, unit });

describe("metric names with suffixes (Prometheus 2.53 OTLP, prometheusremotewrite defaults)", () => {
  it.each([
    [m("DCGM_FI_DEV_GPU_UTIL", "gauge"), "DCGM_FI_DEV_GPU_UTIL"],
    [m("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "monotonic-sum", "mJ"), "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION_mJ_total"],
    [m("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "monotonic-sum"), "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION_total"],
    [m("runai_allocated_gpu_count_per_gpu", "gauge", "1"), "runai_allocated_gpu_count_per_gpu_ratio"],
    [m("runai_allocated_gpu_count_per_gpu", "sum", "1"), "runai_allocated_gpu_count_per_gpu"],
    [m("runai_gpu_memory_used", "gauge", "By"), "runai_gpu_memory_used_bytes"],
    [m("runai_pod_gpu_memory_used_bytes", "gauge", "By"), "runai_pod_gpu_memory_used_bytes"],
    [m("DCGM_FI_DEV_FB_USED", "gauge", "MiBy"), "DCGM_FI_DEV_FB_USED_mebibytes"],
    // total is de-duplicated case-sensitively: the vendor's upper-case TOTAL stays.
    [m("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "monotonic-sum"), "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL_total"],
    [m("runai_jobs_started", "monotonic-sum", "{job}"), "runai_jobs_started_total"],
    [m("gpu.network.io", "monotonic-sum", "By/s"), "gpu_network_io_bytes_per_second_total"],
    [m("runai.gpu.utilization", "gauge", "%"), "runai_gpu_utilization_percent"],
    // a lower-case total anywhere is moved to the end
    [m("foo_total_bytes", "monotonic-sum"), "foo_bytes_total"],
    [m("kai_total_preemption_attempts", "monotonic-sum"), "kai_preemption_attempts_total"],
    [m("kube_pod_container_status_restarts_total", "monotonic-sum"), "kube_pod_container_status_restarts_total"],
    // colons are lost in the legacy normaliser
    [m("runai:gpu_util:avg", "gauge"), "runai_gpu_util_avg"],
    [m("2xx_requests", "gauge"), "_2xx_requests"],
  ])("%j → %s", (metric, expected) => {
    expect(legacyName(metric)).toBe(expected);
  });
});

describe("otlptranslator strategies (Prometheus 3.x)", () => {
  it("keeps colons with suffixes, like the legacy rules otherwise", () => {
    expect(escapedNameWithSuffixes(m("runai:gpu_util:avg", "gauge"))).toBe("runai:gpu_util:avg");
    expect(escapedNameWithSuffixes(m("DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL", "monotonic-sum"))).toBe(
      "DCGM_FI_DEV_NVLINK_BANDWIDTH_TOTAL_total",
    );
    expect(escapedNameWithSuffixes(m("gpu.network.io", "monotonic-sum", "By/s"))).toBe("gpu_network_io_bytes_per_second_total");
  });

  it("without suffixes only sanitises: vendor names survive", () => {
    expect(escapedNameWithoutSuffixes(m("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "monotonic-sum", "mJ"))).toBe(
      "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION",
    );
    expect(escapedNameWithoutSuffixes(m("gpu.network.io", "monotonic-sum", "By/s"))).toBe("gpu_network_io");
    expect(escapedNameWithoutSuffixes(m("runai:gpu_util:avg", "gauge"))).toBe("runai:gpu_util:avg");
    expect(escapedNameWithoutSuffixes(m("a..b", "gauge"))).toBe("a_b");
  });
});

describe("label keys", () => {
  it.each([
    ["k8s.pod.name", "k8s_pod_name"],
    ["UUID", "UUID"],
    ["modelName", "modelName"],
    ["runai.node-pool", "runai_node_pool"],
    ["_hashed_user", "key_hashed_user"],
    ["__meta", "__meta"],
    ["2gpu_slot", "key_2gpu_slot"],
    ["gpu..index", "gpu__index"],
  ])("%s → %s", (key, expected) => {
    expect(labelName(key)).toBe(expected);
  });
});

describe("signals/name-fidelity.md", () => {
  it("is what gpusynth fidelity prints for the default blueprint (run `just gen` after a change)", () => {
    expect(readFileSync(repo("signals/name-fidelity.md"), "utf8")).toBe(
      nameFidelityMarkdown(loadBlueprint(repo("blueprints/lab.yaml")).blueprint),
    );
  });

  it("agrees, where a real receiver applies the same translation, with what it measured", () => {
    // Path 4 (Prometheus 3's default, derived from the rules) against VictoriaMetrics with
    // -opentelemetry.usePrometheusNaming (measured), and the direct-scrape names against its default.
    const prom3 = NAME_PATHS.find((p) => p.id === "prom3-otlp");
    if (prom3 === undefined) throw new Error("no Prometheus 3 path");
    const measured = readReceiverNames();
    const families = new ClusterMetrics(loadBlueprint(repo("blueprints/lab.yaml")).blueprint).families();
    expect(Object.keys(measured.modes.usePrometheusNaming).length).toBe(families.length);
    for (const family of families) {
      const metric = { name: family.name, kind: family.type === "counter" ? ("monotonic-sum" as const) : ("gauge" as const), unit: "" };
      expect(measured.modes.usePrometheusNaming[family.name]?.name, family.name).toBe(prom3.translate(metric));
      expect(measured.modes.default[family.name]?.name, family.name).toBe(family.name);
    }
  });

  it("shows the DCGM counters gaining _total on the default paths and none renamed with suffixes off", () => {
    const text = nameFidelityMarkdown(loadBlueprint(repo("blueprints/lab.yaml")).blueprint);
    expect(text).toMatch(
      /\| `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION` \| counter \| ✗ `DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION_total` \| same \|/,
    );
    expect(text).toMatch(/Renamed: path 1: [1-9]\d*, path 2: 0, .*path 5: 0, path 6: 0, path 7: [1-9]\d* of \d+ families\./);
  });
});
