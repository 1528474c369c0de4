/**
 * The Prometheus text exposition format (0.0.4) of one target, as the vendor's exporter serves
 * it: `# HELP` (when the vendor prints one) and `# TYPE` per family, then one line per series
 * with labels in the vendor's order. Number formatting is JavaScript's shortest form, not each
 * vendor's printf style (dcgm-exporter prints floats with six decimals, kube-state-metrics
 * uses Go's shortest form); the values are the same.
 */
import type { MetricFamily, Sample } from "@gpusynth/constructs";

function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

function escapeHelp(text: string): string {
  return text.replace(/\\/g, "\\\\").replace(/\n/g, "\\n");
}

function sampleValueText(value: number): string {
  if (Number.isNaN(value)) return "NaN";
  if (value === Number.POSITIVE_INFINITY) return "+Inf";
  if (value === Number.NEGATIVE_INFINITY) return "-Inf";
  return String(value);
}

export function exposition(samples: readonly Sample[]): string {
  const families = new Map<MetricFamily, Sample[]>();
  for (const s of samples) {
    const list = families.get(s.family);
    if (list === undefined) families.set(s.family, [s]);
    else list.push(s);
  }
  const lines: string[] = [];
  for (const [family, series] of families) {
    if (family.help !== "") lines.push(`# HELP ${family.name} ${escapeHelp(family.help)}`);
    lines.push(`# TYPE ${family.name} ${family.type}`);
    for (const s of series) {
      const labels = Object.entries(s.labels)
        .map(([k, v]) => `${k}="${escapeLabelValue(v)}"`)
        .join(",");
      lines.push(`${family.name}${labels === "" ? "" : `{${labels}}`} ${sampleValueText(s.value)}`);
    }
  }
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}
