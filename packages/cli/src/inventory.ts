/**
 * What a run actually emits: every metric family per source, with its type, HELP, the label
 * keys seen on its series and the most series seen at once. Built by running the simulation
 * offline and collecting every target at each scrape interval.
 */
import type { Blueprint } from "@gpusynth/blueprint";
import { ClusterRun, drive, every, LABEL_PATTERN, type LabelSet, type MetricFamily, type MetricType, seriesOf } from "@gpusynth/constructs";
import { SCRAPE_REPORT } from "@gpusynth/emit";
import { simulatedMs } from "@gpusynth/sim";

export interface FamilyInventory {
  readonly id: string;
  readonly name: string;
  readonly type: MetricType;
  readonly help: string;
  readonly labels: string[];
  maxSeries: number;
}

export interface SourceInventory {
  /** The signals/ area file that documents the source. */
  readonly area: string;
  readonly jobs: string[];
  readonly families: FamilyInventory[];
}

/** One log source: which receiver shape, and the field names its records carried. */
export interface LogSourceInventory {
  readonly area: string;
  readonly receiver: string;
  readonly resourceKeys: string[];
  readonly attributeKeys: string[];
  records: number;
}

export interface Inventory {
  readonly blueprint: string;
  readonly durationMs: number;
  readonly intervalMs: number;
  readonly sources: SourceInventory[];
  readonly logs: LogSourceInventory[];
}

export function collectInventory(
  blueprint: Blueprint,
  durationMs: number,
  intervalMs: number,
  seed?: number,
  /** Called with the simulated ms reached as the run goes. */
  onProgress?: (simulatedMs: number) => void,
  /**
   * Collects only the ticks after this simulated time: the run gets there unobserved (its logs
   * skipped as a live warm-up skips them), so two windows of one run add up to the whole run
   * (mergeInventories), each on its own core.
   */
  fromMs = 0,
): Inventory {
  // The scheduler's lines are counted, not built, once a cycle has been written whole: every line
  // of its file carries the same fields, and what an inventory keeps is those and the count.
  const run = new ClusterRun(blueprint, { ...(seed === undefined ? {} : { seed }), logs: true, logWriting: { tally: true } });
  if (fromMs > 0) run.skipTo(simulatedMs(fromMs));
  const logSources = new Map<string, LogSourceInventory>();
  const sources = new Map<string, { jobs: Set<string>; families: Map<string, FamilyInventory> }>();
  interface Entry {
    readonly family: FamilyInventory;
    readonly jobs: Set<string>;
    /** The family's label keys so far, as a set (family.labels keeps their first-seen order). */
    readonly keys: Set<string>;
    /**
     * Every key the family declares has been seen: seriesLabels keeps a series' keys within the
     * declared ones, so its samples can teach nothing more (families with label_* never are).
     */
    complete: boolean;
    /** The label sets whose keys were read (a family that is never complete meets the same ones every scrape). */
    readonly labelSets: WeakSet<object>;
    addKey(key: string): void;
  }
  const entries = new Map<MetricFamily, Entry>();
  /** Each family's signals/ area: its construct's, and the receiver's for its report on each scrape. */
  const areas = new Map<MetricFamily, string>([
    ...run.metrics.constructs.flatMap((c) => c.families.map((f) => [f, c.area] as const)),
    ...Object.values(SCRAPE_REPORT).map((f) => [f, "receiver"] as const),
  ]);
  const keySets = new Map<FamilyInventory, Set<string>>();
  const entryOf = (f: MetricFamily): Entry => {
    let entry = entries.get(f);
    if (entry === undefined) {
      const area = areas.get(f) ?? "unknown";
      let source = sources.get(area);
      if (source === undefined) {
        source = { jobs: new Set(), families: new Map() };
        sources.set(area, source);
      }
      let family = source.families.get(f.name);
      if (family === undefined) {
        family = { id: f.id, name: f.name, type: f.type, help: f.help, labels: [], maxSeries: 0 };
        source.families.set(f.name, family);
      }
      const inventory = family;
      let keys = keySets.get(inventory);
      if (keys === undefined) {
        keys = new Set(inventory.labels);
        keySets.set(inventory, keys);
      }
      const known = keys;
      const declared = f.labels;
      const isComplete = () => !declared.includes(LABEL_PATTERN) && declared.every((key) => known.has(key));
      const added: Entry = {
        family: inventory,
        jobs: source.jobs,
        keys: known,
        complete: isComplete(),
        labelSets: new WeakSet(),
        addKey: (key) => {
          known.add(key);
          inventory.labels.push(key);
          added.complete = isComplete();
        },
      };
      entry = added;
      entries.set(f, entry);
    }
    return entry;
  };
  /** Per log source, the resource and attribute objects whose keys are already counted. */
  const seenFields = new Map<LogSourceInventory, WeakSet<object>>();
  drive(run, every(intervalMs, { fromMs, toMs: durationMs }), (frame) => {
    onProgress?.(frame.simulatedMs);
    const seriesNow = new Map<FamilyInventory, number>();
    for (const listed of frame.targets) {
      const target = listed.target;
      const { families, labels, count } = seriesOf(listed);
      // A target's series come family by family: look the family up once per run of series.
      let family: MetricFamily | undefined;
      let entry: Entry | undefined;
      let runStart = 0;
      const endRun = (end: number) => {
        if (entry !== undefined) seriesNow.set(entry.family, (seriesNow.get(entry.family) ?? 0) + end - runStart);
        runStart = end;
      };
      // An index, not an iterator: a platform frame is 450,000 series.
      for (let i = 0; i < count; i++) {
        if (families[i] !== family) {
          endRun(i);
          family = families[i] as MetricFamily;
          entry = entryOf(family);
          entry.jobs.add(target.job);
        }
        const known = entry as Entry;
        const set = labels[i] as LabelSet;
        if (known.complete || known.labelSets.has(set)) continue;
        // A label set is kept from one collect to the next (catalogue.ts): its keys are read once.
        known.labelSets.add(set);
        for (const key in set) if (!known.keys.has(key)) known.addKey(key);
      }
      endRun(count);
    }
    // The receiver's report on each target's scrape (signals/receiver.md): a series per target.
    for (const report of Object.values(SCRAPE_REPORT)) {
      const entry = entryOf(report);
      for (const { target } of frame.targets) entry.jobs.add(target.job);
      seriesNow.set(entry.family, frame.targets.length);
    }
    for (const [family, count] of seriesNow) family.maxSeries = Math.max(family.maxSeries, count);
    for (const record of frame.logs) {
      let source = logSources.get(record.receiver);
      if (source === undefined) {
        source = { area: record.area, receiver: record.receiver, resourceKeys: [], attributeKeys: [], records: 0 };
        logSources.set(record.receiver, source);
      }
      source.records++;
      // Sources share one resource (and often one attribute) object across their records: its
      // keys are read once.
      let seen = seenFields.get(source);
      if (seen === undefined) {
        seen = new WeakSet();
        seenFields.set(source, seen);
      }
      if (!seen.has(record.resource)) {
        seen.add(record.resource);
        for (const key of Object.keys(record.resource)) if (!source.resourceKeys.includes(key)) source.resourceKeys.push(key);
      }
      if (!seen.has(record.attributes)) {
        seen.add(record.attributes);
        for (const key of Object.keys(record.attributes)) if (!source.attributeKeys.includes(key)) source.attributeKeys.push(key);
      }
    }
    if (frame.talliedLogs > 0) {
      const scheduler = logSources.get("filelog");
      if (scheduler === undefined) throw new Error("scheduler log lines were tallied before any was written");
      scheduler.records += frame.talliedLogs;
    }
  });
  return {
    blueprint: blueprint.cluster.name,
    durationMs,
    intervalMs,
    sources: [...sources.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([area, s]) => ({
        area,
        jobs: [...s.jobs].sort(),
        families: [...s.families.values()].sort((a, b) => a.name.localeCompare(b.name)),
      })),
    logs: [...logSources.values()].sort((a, b) => a.receiver.localeCompare(b.receiver)),
  };
}

/**
 * Two windows of one run as one inventory: label keys in first-seen order, the most series at
 * once over both, jobs and log fields united, log records added.
 */
export function mergeInventories(first: Inventory, second: Inventory): Inventory {
  const union = (a: readonly string[], b: readonly string[]) => [...a, ...b.filter((x) => !a.includes(x))];
  const areas = new Map(first.sources.map((s) => [s.area, s]));
  for (const source of second.sources) {
    const earlier = areas.get(source.area);
    if (earlier === undefined) {
      areas.set(source.area, source);
      continue;
    }
    const families = new Map(earlier.families.map((f) => [f.name, f]));
    for (const f of source.families) {
      const e = families.get(f.name);
      families.set(
        f.name,
        e === undefined ? f : { ...e, labels: union(e.labels, f.labels), maxSeries: Math.max(e.maxSeries, f.maxSeries) },
      );
    }
    areas.set(source.area, {
      area: source.area,
      jobs: union(earlier.jobs, source.jobs).sort(),
      families: [...families.values()].sort((a, b) => a.name.localeCompare(b.name)),
    });
  }
  const logs = new Map(first.logs.map((l) => [l.receiver, l]));
  for (const log of second.logs) {
    const e = logs.get(log.receiver);
    logs.set(
      log.receiver,
      e === undefined
        ? log
        : {
            ...e,
            resourceKeys: union(e.resourceKeys, log.resourceKeys),
            attributeKeys: union(e.attributeKeys, log.attributeKeys),
            records: e.records + log.records,
          },
    );
  }
  return {
    blueprint: first.blueprint,
    durationMs: Math.max(first.durationMs, second.durationMs),
    intervalMs: first.intervalMs,
    sources: [...areas.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, s]) => s),
    logs: [...logs.values()].sort((a, b) => a.receiver.localeCompare(b.receiver)),
  };
}

export function inventoryMarkdown(inventory: Inventory): string {
  const lines = [`# Emitted signals: ${inventory.blueprint}`, ""];
  for (const source of inventory.sources) {
    lines.push(`## ${source.area} (job${source.jobs.length === 1 ? "" : "s"} ${source.jobs.map((j) => `\`${j}\``).join(", ")})`, "");
    lines.push("| family | type | labels | max series |", "|---|---|---|---|");
    for (const f of source.families)
      lines.push(`| \`${f.name}\` | ${f.type} | ${f.labels.map((l) => `\`${l}\``).join(", ")} | ${f.maxSeries} |`);
    lines.push("");
  }
  for (const log of inventory.logs) {
    lines.push(`## ${log.area} logs (${log.receiver} receiver, ${log.records} records)`, "");
    lines.push(`- resource attributes: ${log.resourceKeys.map((k) => `\`${k}\``).join(", ")}`);
    lines.push(`- record attributes: ${log.attributeKeys.map((k) => `\`${k}\``).join(", ")}`, "");
  }
  return lines.join("\n");
}
