/**
 * The conventions of otel-collector.yaml that a collector does not enforce: every defined
 * component is used, memory_limiter comes first and batch last, every environment variable is
 * explained in the header, and the remote-write path keeps the vendors' names. What the
 * statements do is judged by the real collector (otel-collector.test.ts).
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const repo = (path: string) => fileURLToPath(new URL(`../../../${path}`, import.meta.url));
const configText = readFileSync(repo("otel-collector.yaml"), "utf8");
const config = parse(configText) as {
  receivers: Record<string, unknown>;
  processors: Record<string, unknown>;
  exporters: Record<string, unknown>;
  service: { pipelines: Record<string, { receivers: string[]; processors: string[]; exporters: string[] }> };
};

describe("otel-collector.yaml wiring", () => {
  it("defines every component a pipeline uses and uses every component it defines", () => {
    const pipelines = Object.values(config.service.pipelines);
    for (const kind of ["receivers", "processors", "exporters"] as const) {
      const used = new Set(pipelines.flatMap((p) => p[kind]));
      expect([...used].sort(), kind).toEqual(Object.keys(config[kind]).sort());
    }
  });

  it("starts with memory_limiter and ends with batch in every pipeline", () => {
    for (const [name, p] of Object.entries(config.service.pipelines)) {
      expect(p.processors[0], name).toBe("memory_limiter");
      expect(p.processors.at(-1), name).toBe("batch");
    }
  });

  it("explains every environment variable it reads in its header", () => {
    const variables = new Set([...configText.matchAll(/\$\{env:([A-Z_]+)(?::-[^}]*)?\}/g)].map((m) => m[1] as string));
    const header = configText.split("\nreceivers:")[0] ?? "";
    expect(variables.size).toBeGreaterThan(0);
    for (const v of variables) expect(header, v).toMatch(new RegExp(`#\\s+${v}\\s`));
  });

  it("keeps the vendors' metric names on the remote-write path", () => {
    const exporter = config.exporters.prometheus_remote_write as { translation_strategy: string };
    expect(exporter.translation_strategy).toBe("UnderscoreEscapingWithoutSuffixes");
  });
});
