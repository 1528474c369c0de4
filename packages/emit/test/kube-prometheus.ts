/**
 * kube-prometheus v0.18.0's rules, as its release renders them (`manifests/*-prometheusRule.yaml`,
 * fetched by scripts/build-tools.sh kube-prometheus), asked of a Prometheus that holds a pushed
 * run: recording rules and alerts evaluated at the simulated instants the run covers.
 *
 * Prometheus evaluates rules on its own wall clock, and a pushed run lies in its past, so each
 * rule is asked as a query: a recorded series a rule reads is replaced by the expression that
 * records it (`inlined`), and an alert fires where its expression holds at every evaluation
 * for its `for:` (`firedAlerts`), as the rule manager's pending → firing does.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parse } from "yaml";
import type { PrometheusServer } from "./prometheus-server.js";

export interface Rule {
  readonly record?: string;
  readonly alert?: string;
  readonly expr: string;
  readonly for?: string;
  readonly labels?: Readonly<Record<string, string>>;
}

/** The PrometheusRules of what gpusynth emulates: the Kubernetes mixin, kube-state-metrics', node-exporter's and kube-prometheus' own. */
export const RULE_FILES = ["kubernetesControlPlane", "kubeStateMetrics", "nodeExporter", "kubePrometheus"] as const;

/** Every rule of the named rule files, in their order, read from the folder `stamp` (built-tools' stamp) lies in. */
export function kubePrometheusRules(stamp: string, files: readonly string[] = RULE_FILES): Rule[] {
  return files.flatMap((file) => {
    const manifest = parse(readFileSync(join(dirname(stamp), `${file}-prometheusRule.yaml`), "utf8")) as {
      spec: { groups: { rules: Rule[] }[] };
    };
    return manifest.spec.groups.flatMap((group) => group.rules);
  });
}

/** A duration as Prometheus writes one (`15m`, `1h`, `0s`), in seconds. */
export function durationSeconds(text: string | undefined): number {
  if (text === undefined) return 0;
  const units: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86_400, w: 604_800, y: 31_536_000 };
  let seconds = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+)(ms|[smhdwy])/g)) seconds += Number(amount) * (units[unit as string] as number);
  return seconds;
}

/** The equality matchers of a selector's braces (`{quantile="0.99", job="x"}`). */
function equalities(selector: string | undefined): Record<string, string> {
  return Object.fromEntries([...(selector ?? "").matchAll(/(\w+)\s*=\s*"([^"]*)"/g)].map(([, k, v]) => [k, v]));
}

/**
 * `expr` with every recorded series replaced by the expressions recording it (those whose static
 * labels agree with the selector's equality matchers, joined by `or`) and filtered by those
 * matchers, recursively; a range read of a recorded series becomes a subquery at kube-prometheus'
 * evaluation interval (30 s).
 */
export function inliner(rules: readonly Rule[]): (expr: string) => string {
  const recorders = new Map<string, Rule[]>();
  for (const rule of rules) if (rule.record !== undefined) recorders.set(rule.record, [...(recorders.get(rule.record) ?? []), rule]);
  if (recorders.size === 0) return (expr) => expr;
  const names = [...recorders.keys()].sort((a, b) => b.length - a.length).map((n) => n.replace(/[:.]/g, "\\$&"));
  const reference = new RegExp(`(?<![\\w:])(${names.join("|")})(?![\\w:])(\\{[^}]*\\})?(\\[[^\\]]+\\])?`, "g");
  const inline = (expr: string, depth: number): string => {
    if (depth > 16) throw new Error(`recording rules nest too deep in ${expr}`);
    return expr.replace(reference, (_match, name: string, selector: string | undefined, range: string | undefined) => {
      const wanted = equalities(selector);
      const matching = (recorders.get(name) ?? []).filter((r) =>
        Object.entries(wanted).every(([k, v]) => r.labels?.[k] === undefined || r.labels[k] === v),
      );
      const body = matching.map((r) => `(${inline(r.expr, depth + 1)})`).join(" or ");
      // The selector's equality matchers kept: `and on` a one-sample vector carrying exactly those
      // values (an empty value matches a series without the label, as the matcher does). Its other
      // matchers (`!=`, `=~`) repeat the recording rules' own in kube-prometheus and are dropped.
      const keys = Object.keys(wanted);
      const filter =
        keys.length === 0
          ? ""
          : ` and on(${keys.join(", ")}) ${keys.reduce((v, k) => `label_replace(${v}, ${JSON.stringify(k)}, ${JSON.stringify(wanted[k])}, "", "")`, "vector(1)")}`;
      const selected = `((${body})${filter})`;
      return range === undefined ? selected : `${selected}${range.slice(0, -1)}:30s]`;
    });
  };
  return (expr) => inline(expr, 0);
}

/** An alert that fired: its name and severity, its labels, and the Unix second it began firing. */
export interface FiredAlert {
  readonly alert: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly firingFrom: number;
}

/**
 * The alerts of `rules` (those named `only`, where given) that fire between `fromMs` and `toMs`
 * (Unix ms), evaluated every `stepSeconds`: a series of an alert's expression fires once it has
 * been present at every evaluation for the rule's `for:` (at once where there is none).
 */
export async function firedAlerts(
  store: PrometheusServer,
  rules: readonly Rule[],
  fromMs: number,
  toMs: number,
  stepSeconds: number,
  only?: string,
): Promise<FiredAlert[]> {
  const inline = inliner(rules);
  const fired: FiredAlert[] = [];
  for (const rule of rules) {
    if (rule.alert === undefined || (only !== undefined && rule.alert !== only)) continue;
    const holdFor = durationSeconds(rule.for);
    const alert = `${rule.alert} (${rule.labels?.severity ?? "none"})`;
    for (const series of await store.queryRange(inline(rule.expr), fromMs, toMs, stepSeconds)) {
      let pendingSince: number | undefined;
      let previous: number | undefined;
      for (const [time] of series.values) {
        if (previous === undefined || time - previous > stepSeconds) pendingSince = time;
        previous = time;
        if (time - (pendingSince as number) >= holdFor) {
          fired.push({ alert, labels: series.metric, firingFrom: time });
          break;
        }
      }
    }
  }
  return fired;
}

/** A Grafana dashboard of kube-prometheus' release: its template variables and each panel's queries. */
export interface Dashboard {
  readonly file: string;
  readonly title: string;
  readonly variables: ReadonlyArray<{ readonly name: string; readonly type: string; readonly query: string; readonly current?: string }>;
  readonly panels: ReadonlyArray<{ readonly title: string; readonly exprs: readonly string[] }>;
}

/** The dashboards of `files` (`k8s-resources-pod.json`, …) from the release's grafana-dashboardDefinitions.yaml. */
export function kubePrometheusDashboards(stamp: string, files: readonly string[]): Dashboard[] {
  const manifest = parse(readFileSync(join(dirname(stamp), "grafana-dashboardDefinitions.yaml"), "utf8")) as {
    items: { data: Record<string, string> }[];
  };
  const all = new Map(manifest.items.flatMap((item) => Object.entries(item.data)));
  return files.map((file) => {
    const json = all.get(file);
    if (json === undefined) throw new Error(`kube-prometheus ships no dashboard ${file}`);
    interface Panel {
      title?: string;
      panels?: Panel[];
      targets?: { expr?: string }[];
    }
    const board = JSON.parse(json) as {
      title: string;
      panels?: Panel[];
      rows?: Panel[];
      templating?: { list: { name: string; type: string; query?: unknown; current?: { value?: unknown } }[] };
    };
    const panels: { title: string; exprs: string[] }[] = [];
    const walk = (list: Panel[] | undefined) => {
      for (const panel of list ?? []) {
        walk(panel.panels);
        const exprs = (panel.targets ?? []).flatMap((t) => (t.expr === undefined || t.expr === "" ? [] : [t.expr]));
        if (exprs.length > 0) panels.push({ title: panel.title ?? "", exprs });
      }
    };
    walk(board.panels);
    walk(board.rows);
    const variables = (board.templating?.list ?? []).map((v) => ({
      name: v.name,
      type: v.type,
      query: typeof v.query === "string" ? v.query : ((v.query as { query?: string } | undefined)?.query ?? ""),
      ...(typeof v.current?.value === "string" ? { current: v.current.value } : {}),
    }));
    return { file, title: board.title, variables, panels };
  });
}

/** `text` with Grafana's variables (`$name`, `${name}`, `${name:format}`, `[[name]]`) replaced from `values`. */
export function substitute(text: string, values: Readonly<Record<string, string>>): string {
  return text.replace(
    /\$\{(\w+)(?::\w+)?\}|\$(\w+)|\[\[(\w+)\]\]/g,
    (match, a?: string, b?: string, c?: string) => values[(a ?? b ?? c) as string] ?? match,
  );
}

/**
 * A dashboard's variables as a user sets them on opening it: each query variable
 * (`label_values(<query>, <label>)`) takes the value `chosen` gives it, else the first of its
 * values, sorted, at `atMs`, after the variables before it are set ("" where it finds none, as a
 * hidden single-cluster `cluster` does); other variables their saved value. `builtins` are
 * Grafana's own (`__rate_interval`, …); `inline` replaces recorded series by their expressions.
 */
export async function openDashboard(
  store: PrometheusServer,
  dashboard: Dashboard,
  atMs: number,
  options: {
    readonly builtins: Readonly<Record<string, string>>;
    readonly inline: (expr: string) => string;
    readonly chosen?: Readonly<Record<string, string>>;
  },
): Promise<Record<string, string>> {
  const values: Record<string, string> = { ...options.builtins };
  for (const variable of dashboard.variables) {
    if (variable.type === "datasource") continue;
    const labelValues = /^label_values\((.*),\s*(\w+)\)\s*$/s.exec(variable.query);
    if (variable.type !== "query" || labelValues === null) {
      values[variable.name] = variable.current ?? "";
      continue;
    }
    const [, query, label] = labelValues as unknown as [string, string, string];
    const found = await store.query(options.inline(substitute(query, values)), atMs);
    const offered = [...new Set(found.map((s) => s.metric[label] ?? "").filter((v) => v !== ""))].sort();
    const chosen = options.chosen?.[variable.name];
    values[variable.name] = chosen !== undefined && offered.includes(chosen) ? chosen : (offered[0] ?? "");
  }
  return values;
}
