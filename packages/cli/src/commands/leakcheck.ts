import { loadBlueprint } from "@gpusynth/blueprint";
import { type Leak, scanLoki, scanOtlpJson, scanPrometheus, scanVictoriaLogs } from "../leakcheck/scan.js";
import { sensitiveNames } from "../leakcheck/sensitive.js";
import type { Output } from "../output.js";
import { parseCommand, repeated } from "../parse.js";
import { EXIT_FAILURE, EXIT_OK, UsageError } from "../usage.js";
import { decimalOption } from "./options.js";

export const leakcheckHelp = `Usage: gpusynth leakcheck --blueprint <file> (--prometheus <url> | --victorialogs <url> | --loki <url> | --otlp-json <file>)...

Lists every place where a sensitive name the blueprint declares — a project, department, user
or workload, also inside names derived from it (namespace runai-<project>, pod and pod-group
names, queue names) — appears in clear: in a Prometheus server's series (every label value), in
every record a VictoriaLogs server holds (the message and every field), in the last day of a
Loki server's logs (stream labels, lines, structured metadata) or in OTLP-JSON lines as gpusynth
or a collector's file exporter writes them (resource, data-point and log attribute values, log
bodies). Label keys and metric names are the vendors' vocabulary and are not searched. Exits 1
if anything leaks, 0 if nothing does: run it behind a pseudonymising pipeline to prove it works.

Options:
  --blueprint <file>    the blueprint whose names are sensitive (required)
  --prometheus <url>    a Prometheus server to read all series from (repeatable)
  --victorialogs <url>  a VictoriaLogs server to read every record from (repeatable)
  --loki <url>          a Loki server to read the last day of logs from (repeatable)
  --otlp-json <file>    an OTLP-JSON lines file of metrics or logs (repeatable)
  --limit <n>           print at most n findings (default: 50; the count is always complete)
  -h, --help            show this help

Examples:
  gpusynth run --offline --duration 1h --otlp-json m.jsonl --otlp-json-logs l.jsonl
  gpusynth leakcheck --blueprint blueprints/lab.yaml --otlp-json m.jsonl --otlp-json l.jsonl   # finds the raw names
  gpusynth leakcheck --blueprint blueprints/lab.yaml --prometheus http://localhost:9090      # behind the collector: none
`;

export async function leakcheckCommand(args: readonly string[], output: Output): Promise<number> {
  const { values, positionals } = parseCommand(
    args,
    {
      blueprint: { type: "string" },
      prometheus: { type: "string", multiple: true },
      loki: { type: "string", multiple: true },
      victorialogs: { type: "string", multiple: true },
      "otlp-json": { type: "string", multiple: true },
      limit: { type: "string" },
    },
    "leakcheck",
  );
  if (positionals.length > 0)
    throw new UsageError(`unexpected argument "${positionals[0]}": name sources with --prometheus, --victorialogs, --loki or --otlp-json`);
  if (typeof values.blueprint !== "string") throw new UsageError("--blueprint: expected the blueprint whose names are sensitive");
  const prometheus = repeated(values, "prometheus");
  const loki = repeated(values, "loki");
  const victoriaLogs = repeated(values, "victorialogs");
  const files = repeated(values, "otlp-json");
  if (prometheus.length + loki.length + victoriaLogs.length + files.length === 0)
    throw new UsageError("expected at least one source: --prometheus <url>, --victorialogs <url>, --loki <url> or --otlp-json <file>");
  const limit = typeof values.limit !== "string" ? 50 : decimalOption(values.limit, true);
  if (limit === undefined) throw new UsageError(`--limit: expected a whole number, found "${values.limit}"`);

  const names = sensitiveNames(loadBlueprint(values.blueprint).blueprint);
  const leaks: Leak[] = [];
  for (const file of files) {
    try {
      for (const leak of scanOtlpJson(file, names)) leaks.push(leak);
    } catch (cause) {
      throw new UsageError(`--otlp-json ${file}: ${(cause as NodeJS.ErrnoException).code ?? (cause as Error).message}`);
    }
  }
  for (const url of prometheus) {
    try {
      for (const leak of await scanPrometheus(url, names)) leaks.push(leak);
    } catch (cause) {
      throw new UsageError(`--prometheus ${url}: ${(cause as Error).message}`);
    }
  }
  for (const url of victoriaLogs) {
    try {
      for (const leak of await scanVictoriaLogs(url, names)) leaks.push(leak);
    } catch (cause) {
      throw new UsageError(`--victorialogs ${url}: ${(cause as Error).message}`);
    }
  }
  for (const url of loki) {
    try {
      for (const leak of await scanLoki(url, names)) leaks.push(leak);
    } catch (cause) {
      throw new UsageError(`--loki ${url}: ${(cause as Error).message}`);
    }
  }
  for (const leak of leaks.slice(0, limit))
    output.out(`LEAK ${leak.where}: "${leak.text}" contains ${leak.name.kind} "${leak.name.value}"\n`);
  const found = new Set(leaks.map((l) => l.name.value));
  output.out(
    leaks.length === 0
      ? `leakcheck: none of ${names.length} sensitive names appears in clear\n`
      : `leakcheck: ${leaks.length} finding(s) of ${found.size} of ${names.length} sensitive names in clear${leaks.length > limit ? ` (first ${limit} shown)` : ""}\n`,
  );
  return leaks.length === 0 ? EXIT_OK : EXIT_FAILURE;
}
