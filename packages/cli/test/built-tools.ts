/**
 * The Go tools of the real pipeline, built from their modules at pinned releases by
 * scripts/build-tools.sh into .cache/ (which .ci/run runs): the OpenTelemetry Collector of
 * deploy/otelcol/builder.yaml and its node agent (deploy/otelcol-node), Prometheus 3, VictoriaLogs, Helm
 * and kube-prometheus' rendered rules and dashboards at its release. A test that needs one fails in CI
 * when it is missing, and elsewhere is skipped with one line saying how to get it.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = fileURLToPath(new URL("../../../", import.meta.url));

const TOOLS = {
  otelcol: ".cache/otelcol/otelcol-gpusynth",
  "otelcol-node": ".cache/otelcol-node/otelcol-gpusynth-node",
  prometheus3: ".cache/prometheus3/prometheus",
  victorialogs: ".cache/victorialogs/victoria-logs",
  helm: ".cache/helm/helm",
  // Written last, when every manifest is in the folder.
  "kube-prometheus": ".cache/kube-prometheus/.stamp",
} as const;

export type BuiltTool = keyof typeof TOOLS;

const told = new Set<BuiltTool>();

/** The path of a built tool, or "" where it is missing outside CI (said once on stderr). */
export function builtTool(tool: BuiltTool): string {
  const path = join(root, TOOLS[tool]);
  if (existsSync(path)) return path;
  const how = `bash scripts/build-tools.sh ${tool}`;
  if (process.env.CI === "true") throw new Error(`CI must provide ${TOOLS[tool]}: .ci/run builds it (${how})`);
  if (!told.has(tool)) {
    told.add(tool);
    process.stderr.write(`skipping the tests that need ${TOOLS[tool]}: build it with \`${how}\`\n`);
  }
  return "";
}
