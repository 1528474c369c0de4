/**
 * Where sensitive names appear in clear: in OTLP-JSON lines (every attribute value — resource,
 * data point, log record — and every log body, with the path of the field that holds it) or in a
 * Prometheus server's series (every label value). Keys and metric names are the vendors' fixed
 * vocabulary and are not searched.
 */
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { mayHoldNames, namesIn, type SensitiveName } from "./sensitive.js";

export interface Leak {
  /** The source and field, e.g. "metrics.jsonl:3 resourceMetrics[0]….attributes[namespace]". */
  readonly where: string;
  readonly text: string;
  readonly name: SensitiveName;
}

/** How an array element is shown in a path: by its OTLP attribute key or metric name, else its index. */
function label(item: unknown, index: number): string {
  if (typeof item !== "object" || item === null) return String(index);
  const { key, name } = item as { key?: unknown; name?: unknown };
  return typeof key === "string" ? key : typeof name === "string" ? name : String(index);
}

/**
 * Calls `visit` with every attribute value and body string of a JSON value (the fields named
 * stringValue), and a function that renders its path: paths are built only for what is found,
 * which keeps a scan of millions of records to the time of parsing them.
 */
function visitValues(value: unknown, segments: string[], visit: (text: string, path: () => string) => void): void {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const item: unknown = value[i];
      if (typeof item !== "object" || item === null) continue;
      segments.push(`[${label(item, i)}]`);
      visitValues(item, segments, visit);
      segments.pop();
    }
    return;
  }
  if (typeof value !== "object" || value === null) return;
  for (const key in value) {
    const child = (value as Record<string, unknown>)[key];
    const segment = segments.length === 0 ? key : `.${key}`;
    if (typeof child === "string") {
      // Data lives in attribute values and bodies; keys, metric names and descriptions are the
      // vendors' fixed vocabulary, whatever a blueprint's names happen to spell.
      if (key === "stringValue") visit(child, () => `${segments.join("")}${segment}`);
    } else if (typeof child === "object" && child !== null) {
      segments.push(segment);
      visitValues(child, segments, visit);
      segments.pop();
    }
  }
}

export function scanOtlpJson(file: string, names: readonly SensitiveName[]): Leak[] {
  const leaks: Leak[] = [];
  const bytes = readFileSync(file);
  // gzip (as `run --otlp-json x.jsonl.gz` writes it) is read by its magic number, whatever the name.
  const text = bytes[0] === 0x1f && bytes[1] === 0x8b ? gunzipSync(bytes).toString("utf8") : bytes.toString("utf8");
  text.split("\n").forEach((line, index) => {
    if (line.trim() === "") return;
    if (namelessObject(line, names)) return;
    leaks.push(...scanOtlpRequest(JSON.parse(line) as unknown, `${file}:${index + 1}`, names));
  });
  return leaks;
}

/**
 * A line of JSON that holds no name: a JSON object whose characters hold none of the names,
 * so none of its values can (mayHoldNames). Such lines are not parsed: a pseudonymised file or
 * backend is nearly all of them, and parsing was most of a scan's time. A line that is not an
 * object at all is parsed, so a file that is no JSON still fails with the parser's error.
 */
function namelessObject(line: string, names: readonly SensitiveName[]): boolean {
  return line.trimStart().startsWith("{") && line.trimEnd().endsWith("}") && !mayHoldNames(line, names);
}

/** The leaks in one OTLP-JSON request, already parsed (`where` says which, e.g. file:line). */
export function scanOtlpRequest(request: unknown, where: string, names: readonly SensitiveName[]): Leak[] {
  const leaks: Leak[] = [];
  visitValues(request, [], (value, path) => {
    for (const name of namesIn(value, names)) leaks.push({ where: `${where} ${path()}`, text: value, name });
  });
  return leaks;
}

/** Every series Prometheus holds (all time), label by label. */
export async function scanPrometheus(url: string, names: readonly SensitiveName[]): Promise<Leak[]> {
  const response = await fetch(`${url.replace(/\/$/, "")}/api/v1/series?match[]=${encodeURIComponent('{__name__=~".+"}')}`);
  const body = (await response.json()) as { status: string; data?: Array<Record<string, string>>; error?: string };
  if (body.status !== "success" || body.data === undefined) throw new Error(`${url}: Prometheus answered ${body.error ?? response.status}`);
  const leaks: Leak[] = [];
  for (const series of body.data) {
    const id = `${series.__name__ ?? ""}{${Object.entries(series)
      .filter(([k]) => k !== "__name__")
      .map(([k, v]) => `${k}="${v}"`)
      .join(",")}}`;
    for (const [label, value] of Object.entries(series)) {
      if (label === "__name__") continue; // metric names are the vendors' vocabulary
      for (const name of namesIn(value, names)) leaks.push({ where: `${url} ${id} ${label}`, text: value, name });
    }
  }
  return leaks;
}

interface LokiStreams {
  status: string;
  data?: { result: Array<{ stream: Record<string, string>; values: Array<[string, string, Record<string, string>?]> }> };
  error?: string;
}

/** Every log line Loki holds from the last `sinceMs`, with its stream labels and structured metadata, page by page. */
export async function scanLoki(url: string, names: readonly SensitiveName[], sinceMs = 86_400_000): Promise<Leak[]> {
  const base = url.replace(/\/$/, "");
  const leaks: Leak[] = [];
  const PAGE = 5000;
  let startNs = BigInt(Date.now() - sinceMs) * 1_000_000n;
  for (let page = 0; page < 1000; page++) {
    const query = new URLSearchParams({ query: '{service_name=~".+"}', start: String(startNs), limit: String(PAGE), direction: "forward" });
    const response = await fetch(`${base}/loki/api/v1/query_range?${query}`);
    const body = (await response.json()) as LokiStreams;
    if (body.status !== "success" || body.data === undefined) throw new Error(`${url}: Loki answered ${body.error ?? response.status}`);
    let lines = 0;
    let last = startNs;
    for (const stream of body.data.result) {
      const id = `{${Object.entries(stream.stream)
        .map(([k, v]) => `${k}="${v}"`)
        .join(",")}}`;
      for (const [label, value] of Object.entries(stream.stream))
        for (const name of namesIn(value, names)) leaks.push({ where: `${url} ${id} ${label}`, text: value, name });
      for (const [ts, line, metadata] of stream.values) {
        lines++;
        if (BigInt(ts) > last) last = BigInt(ts);
        for (const name of namesIn(line, names)) leaks.push({ where: `${url} ${id} line at ${ts}`, text: line, name });
        for (const [key, value] of Object.entries(metadata ?? {}))
          for (const name of namesIn(value, names)) leaks.push({ where: `${url} ${id} line at ${ts} ${key}`, text: value, name });
      }
    }
    if (lines < PAGE) break;
    startNs = last + 1n;
  }
  return leaks;
}

/** Fields VictoriaLogs adds of its own: the time, and the stream's id and label set (its fields repeat them one by one). */
const VICTORIA_LOGS_OWN = new Set(["_time", "_stream_id", "_stream"]);

/**
 * Every record a VictoriaLogs server holds (all time), field by field: the message (`_msg`, the
 * log body) and every resource and record attribute it stored as a field. Read as LogsQL's JSON
 * lines, one record a line, as they stream in.
 */
export async function scanVictoriaLogs(url: string, names: readonly SensitiveName[]): Promise<Leak[]> {
  const base = url.replace(/\/$/, "");
  const response = await fetch(`${base}/select/logsql/query`, { method: "POST", body: new URLSearchParams({ query: "*" }) });
  if (!response.ok || response.body === null) throw new Error(`${url}: VictoriaLogs answered ${response.status} ${await response.text()}`);
  const leaks: Leak[] = [];
  const scanLine = (line: string) => {
    if (line.trim() === "" || namelessObject(line, names)) return;
    const record = JSON.parse(line) as Record<string, string>;
    for (const [field, value] of Object.entries(record)) {
      if (VICTORIA_LOGS_OWN.has(field)) continue;
      for (const name of namesIn(value, names))
        leaks.push({ where: `${url} record at ${record._time ?? "?"} ${field}`, text: value, name });
    }
  };
  const decoder = new TextDecoder();
  let rest = "";
  for await (const chunk of response.body) {
    const lines = (rest + decoder.decode(chunk as Uint8Array, { stream: true })).split("\n");
    rest = lines.pop() ?? "";
    for (const line of lines) scanLine(line);
  }
  scanLine(rest + decoder.decode());
  return leaks;
}
