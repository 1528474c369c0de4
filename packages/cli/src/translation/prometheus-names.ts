/**
 * OTLP → Prometheus name translation on the paths a gpusynth metric can take, after the pinned
 * translator code (prometheus/prometheus @v2.53.3 storage/remote/otlptranslator/,
 * prometheus/otlptranslator @v1.0.0):
 * - legacy normalisation (Prometheus 2.53.3 `otlptranslator/prometheus/normalize_name.go`, and
 *   collector-contrib's prometheusremotewrite of the same lineage): tokens split on anything
 *   that is not a letter or digit (colons are lost), unit words, `total` moved to the end of
 *   monotonic sums, `ratio` for unit-`1` gauges;
 * - prometheus/otlptranslator v1.0.0 (Prometheus ≥ 3.7, newer collectors): the same suffix
 *   rules with ASCII letters, digits and colons kept, or no suffixes at all;
 * - label keys: every other character becomes `_` (runs kept), a leading digit gets `key_`, a
 *   single leading `_` gets `key` (Prometheus 2.53 `normalize_label.go`).
 */

export type MetricKind = "gauge" | "monotonic-sum" | "sum";

export interface OtlpMetric {
  readonly name: string;
  readonly kind: MetricKind;
  /** UCUM unit; gpusynth sends "" as a scrape would (no UNIT metadata in text format 0.0.4). */
  readonly unit: string;
}

/** UCUM units → words (SPEC §"Metric Metadata", otlptranslator unit_namer.go). */
const UNIT_WORDS: Readonly<Record<string, string>> = {
  d: "days",
  h: "hours",
  min: "minutes",
  s: "seconds",
  ms: "milliseconds",
  us: "microseconds",
  ns: "nanoseconds",
  By: "bytes",
  KiBy: "kibibytes",
  MiBy: "mebibytes",
  GiBy: "gibibytes",
  TiBy: "tebibytes",
  KBy: "kilobytes",
  MBy: "megabytes",
  GBy: "gigabytes",
  TBy: "terabytes",
  m: "meters",
  V: "volts",
  A: "amperes",
  J: "joules",
  W: "watts",
  g: "grams",
  Cel: "celsius",
  Hz: "hertz",
  "%": "percent",
};
const PER_UNIT_WORDS: Readonly<Record<string, string>> = {
  s: "second",
  m: "minute",
  h: "hour",
  d: "day",
  w: "week",
  mo: "month",
  y: "year",
};

/** The unit's words: "MiBy" → ["mebibytes"], "By/s" → ["bytes", "per", "second"]; braces and "1" give none. */
function unitTokens(unit: string, clean: (s: string) => string[]): string[] {
  if (unit === "" || unit === "1" || unit.includes("{") || unit.includes("}")) return [];
  const [main = "", per] = unit.split("/", 2);
  const tokens = main === "" ? [] : clean(UNIT_WORDS[main] ?? main);
  if (per !== undefined && per !== "") tokens.push("per", ...clean(PER_UNIT_WORDS[per] ?? per));
  return tokens;
}

function withSuffixes(metric: OtlpMetric, split: (s: string) => string[]): string {
  let tokens = split(metric.name);
  for (const word of unitTokens(metric.unit, split)) if (!tokens.includes(word)) tokens.push(word);
  if (metric.kind === "monotonic-sum") tokens = [...tokens.filter((t) => t !== "total"), "total"];
  if (metric.kind === "gauge" && metric.unit === "1") tokens = [...tokens.filter((t) => t !== "ratio"), "ratio"];
  const name = tokens.join("_");
  return /^[0-9]/.test(name) ? `_${name}` : name;
}

/** Prometheus 2.53.3 OTLP receiver and collector prometheusremotewrite defaults (legacy normaliser). */
export function legacyName(metric: OtlpMetric): string {
  return withSuffixes(metric, (s) => s.split(/[^\p{L}\p{N}]+/u).filter((t) => t !== ""));
}

/** prometheus/otlptranslator UnderscoreEscapingWithSuffixes (Prometheus 3.x default). */
export function escapedNameWithSuffixes(metric: OtlpMetric): string {
  return withSuffixes(metric, (s) => s.split(/[^A-Za-z0-9:]+/).filter((t) => t !== ""));
}

/** UnderscoreEscapingWithoutSuffixes / add_metric_suffixes: false: sanitised, nothing appended. */
export function escapedNameWithoutSuffixes(metric: OtlpMetric): string {
  const name = metric.name.replace(/[^A-Za-z0-9_:]/g, "_").replace(/_+/g, "_");
  return /^[0-9]/.test(name) ? `_${name}` : name;
}

/** Label keys (Prometheus 2.53 normalize_label.go; Prometheus 3 defaults). */
export function labelName(key: string): string {
  let label = key.replace(/[^\p{L}\p{N}_]/gu, "_");
  if (/^[0-9]/.test(label)) label = `key_${label}`;
  else if (label.startsWith("_") && !label.startsWith("__")) label = `key${label}`;
  return label;
}

export interface NamePath {
  readonly id: string;
  readonly title: string;
  readonly translate: (metric: OtlpMetric) => string;
}

/** The paths the fidelity report compares, in its column order. */
export const NAME_PATHS: readonly NamePath[] = [
  { id: "scrape", title: "direct scrape (or the collector's prometheus receiver → prometheus exporter)", translate: (m) => m.name },
  { id: "prw-default", title: "collector prometheusremotewrite, default translation", translate: legacyName },
  {
    id: "prw-no-suffixes",
    title:
      "prometheusremotewrite with `add_metric_suffixes: false`, as otel-collector.yaml sets it (newer releases: `translation_strategy: UnderscoreEscapingWithoutSuffixes`)",
    translate: escapedNameWithoutSuffixes,
  },
  { id: "prom2-otlp", title: "Prometheus 2.53 OTLP receiver (suffixes always on)", translate: legacyName },
  { id: "prom3-otlp", title: "Prometheus 3.x OTLP receiver, default UnderscoreEscapingWithSuffixes", translate: escapedNameWithSuffixes },
  {
    id: "prom3-no-suffixes",
    title: "Prometheus 3.x OTLP receiver, UnderscoreEscapingWithoutSuffixes",
    translate: escapedNameWithoutSuffixes,
  },
];
