/**
 * The compose lab, checked without Docker: the compose file parses, every image is pinned to a
 * version, everything it mounts or builds from exists, services refer to services that exist,
 * the collector points at the lab's Prometheus and Loki, and every Grafana panel runs one of
 * the queries docs/queries.md documents (which the suite parses and proves on Prometheus).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";

const root = fileURLToPath(new URL("../../../", import.meta.url));
const composeDir = join(root, "compose");

interface Service {
  image?: string;
  build?: { context: string; dockerfile: string };
  volumes?: string[];
  depends_on?: string[];
  environment?: Record<string, string>;
  command?: string[];
}
const compose = parse(readFileSync(join(composeDir, "compose.yaml"), "utf8")) as { services: Record<string, Service> };
const services = Object.entries(compose.services);

describe("compose/compose.yaml", () => {
  it("runs gpusynth, the collector, Prometheus, Loki and Grafana", () => {
    expect(Object.keys(compose.services).sort()).toEqual(["collector", "gpusynth", "grafana", "loki", "prometheus"]);
  });

  it("pins every image to a version", () => {
    for (const [name, s] of services) {
      if (s.build !== undefined) continue;
      expect(s.image, name).toMatch(/^[\w./-]+:v?\d+\.\d+\.\d+$/);
    }
  });

  it("builds gpusynth from the repository with a Dockerfile that exists", () => {
    const build = compose.services.gpusynth?.build;
    expect(build).toBeDefined();
    const context = resolve(composeDir, build?.context ?? "");
    expect(context).toBe(resolve(root));
    expect(existsSync(join(context, build?.dockerfile ?? ""))).toBe(true);
    for (const [, source] of readFileSync(join(context, build?.dockerfile ?? ""), "utf8").matchAll(/^COPY (.+) \S+$/gm))
      for (const path of (source as string).split(" ")) expect(existsSync(join(context, path)), path).toBe(true);
  });

  it("mounts only files and folders that exist", () => {
    for (const [name, s] of services) {
      for (const volume of s.volumes ?? []) {
        const source = volume.split(":")[0] as string;
        expect(existsSync(resolve(composeDir, source)), `${name}: ${source}`).toBe(true);
      }
    }
  });

  it("depends only on services it defines, and wires the collector to them", () => {
    for (const [name, s] of services) for (const d of s.depends_on ?? []) expect(compose.services, `${name} → ${d}`).toHaveProperty(d);
    const env = compose.services.collector?.environment ?? {};
    expect(env.PROMETHEUS_REMOTE_WRITE).toBe("http://prometheus:9090/api/v1/write");
    expect(env.LOGS_OTLP_ENDPOINT).toBe("http://loki:3100/otlp");
    expect(compose.services.gpusynth?.environment?.OTEL_EXPORTER_OTLP_ENDPOINT).toBe("http://collector:4318");
    expect(compose.services.prometheus?.command).toContain("--web.enable-remote-write-receiver");
    // Every variable the collector config reads is set for the collector.
    const config = readFileSync(join(root, "otel-collector.yaml"), "utf8");
    for (const [, variable] of config.matchAll(/\$\{env:([A-Z_]+)\}/g)) expect(env, variable).toHaveProperty(variable as string);
  });

  it("provisions Grafana's data sources at the lab's Prometheus and Loki", () => {
    const sources = parse(readFileSync(join(composeDir, "grafana/provisioning/datasources/datasources.yaml"), "utf8")) as {
      datasources: Array<{ uid: string; url: string }>;
    };
    expect(sources.datasources.map((d) => [d.uid, d.url])).toEqual([
      ["prometheus", "http://prometheus:9090"],
      ["loki", "http://loki:3100"],
    ]);
  });
});

describe("the Grafana dashboards", () => {
  // The lab's Prometheus receives the collector's push, which keeps each exporter's own labels:
  // the walk's forms for the GPU Operator's ServiceMonitor (ids ending -exported) do not apply.
  const documented = new Set(
    [...readFileSync(join(root, "docs/queries.md"), "utf8").matchAll(/<!-- query: ([\w-]+) -->\n```promql\n([\s\S]*?)```/g)]
      .filter((m) => !(m[1] as string).endsWith("-exported"))
      .map((m) => (m[2] as string).trim()),
  );
  const dashboards = readdirSync(join(composeDir, "grafana/dashboards")).map(
    (f) =>
      [f, JSON.parse(readFileSync(join(composeDir, "grafana/dashboards", f), "utf8"))] as [
        string,
        { uid: string; panels: Array<{ title: string; datasource: { uid: string }; targets: Array<{ expr: string }> }> },
      ],
  );

  it("are the failed-job and slow-job journeys", () => {
    expect(dashboards.map(([, d]) => d.uid).sort()).toEqual(["gpusynth-failed-job", "gpusynth-slow-job"]);
  });

  it("run only documented queries, against a provisioned data source, and between them all of them", () => {
    const used = new Set<string>();
    for (const [file, d] of dashboards) {
      for (const panel of d.panels) {
        expect(panel.datasource.uid, `${file}: ${panel.title}`).toBe("prometheus");
        for (const target of panel.targets) {
          expect(documented.has(target.expr), `${file}: ${panel.title}`).toBe(true);
          used.add(target.expr);
        }
      }
    }
    expect(used.size).toBe(documented.size);
  });
});
