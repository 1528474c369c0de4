/**
 * The Prometheus text exposition format (0.0.4) of one target, as the vendor's exporter serves
 * it: `# HELP` (when the vendor prints one) and `# TYPE` per family, then one line per series
 * with labels in the vendor's order. Number formatting is JavaScript's shortest form, not each
 * vendor's printf style (dcgm-exporter prints floats with six decimals, kube-state-metrics
 * uses Go's shortest form); the values are the same.
 */
import { flattened, KEPT_TEXT, type MetricFamily, type Sample, SERIES_LABELS, SeriesColumns } from "@gpusynth/constructs";

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

/** `{k="v",…}` in the label set's order, or nothing for no labels; kept with a series' label set. */
export function labelsText(labels: Sample["labels"] & { [KEPT_TEXT]?: string }): string {
  const kept = labels[KEPT_TEXT];
  if (kept !== undefined) return kept;
  const pairs = Object.entries(labels)
    .map(([k, v]) => `${k}="${escapeLabelValue(v)}"`)
    .join(",");
  const text = pairs === "" ? "" : flattened(`{${pairs}}`);
  if (Object.getPrototypeOf(labels) === SERIES_LABELS) Object.defineProperty(labels, KEPT_TEXT, { value: text, enumerable: false });
  return text;
}

/** A target's exposition as one string (expositionChunks joined): for a target of known, modest size. */
export function exposition(samples: SeriesColumns | readonly Sample[]): string {
  return expositionChunks(samples).join("");
}

/**
 * Lines per chunk of expositionChunks. One string holds at most 2^29 - 24 characters in V8 (about
 * 512 MiB), and a line takes 100-300 bytes: hyperscale.yaml's kube-state-metrics, one target of
 * 3.8 million series, is more than any one string holds. 65,536 lines make chunks of 6-20 MB.
 */
export const LINES_PER_CHUNK = 65_536;

/** A target's exposition in pieces of at most `linesPerChunk` whole lines each, in order: served one after the other. */
export function expositionChunks(samples: SeriesColumns | readonly Sample[], linesPerChunk = LINES_PER_CHUNK): string[] {
  const series = samples instanceof SeriesColumns ? samples : SeriesColumns.of(samples);
  // Each family's places, in the order the family first comes: its series are written together.
  const families = new Map<MetricFamily, number[]>();
  for (let at = 0; at < series.count; at++) {
    const family = series.families[at] as MetricFamily;
    const places = families.get(family);
    if (places === undefined) families.set(family, [at]);
    else places.push(at);
  }
  const chunks: string[] = [];
  let lines: string[] = [];
  const line = (text: string) => {
    lines.push(text);
    if (lines.length === linesPerChunk) {
      chunks.push(`${lines.join("\n")}\n`);
      lines = [];
    }
  };
  for (const [family, places] of families) {
    if (family.help !== "") line(`# HELP ${family.name} ${escapeHelp(family.help)}`);
    line(`# TYPE ${family.name} ${family.type}`);
    for (const at of places)
      line(`${family.name}${labelsText(series.labels[at] as Sample["labels"])} ${sampleValueText(series.values[at] as number)}`);
  }
  if (lines.length > 0) chunks.push(`${lines.join("\n")}\n`);
  return chunks;
}
