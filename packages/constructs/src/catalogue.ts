/**
 * The vocabulary every construct speaks: metric families as the vendor documents them, and
 * samples of them. Each family carries the id of its row in signals/<area>.md, where its
 * name, type, labels and source are recorded; a family that is not there is not emitted.
 */

import type { ClusterView, UnixMs } from "@gpusynth/sim";

/**
 * The Prometheus type the vendor prints in `# TYPE`. `untyped`: the exporter declares none (client_golang's
 * UntypedValue, written `# TYPE <name> untyped`); a collector's prometheus receiver makes a gauge
 * of it, as of every family of unknown type.
 */
export type MetricType = "gauge" | "counter" | "untyped";

export interface MetricFamily {
  /** Stable id of the family's row in signals/<area>.md, e.g. "dcgm-exporter.gpu_util". */
  readonly id: string;
  /** The vendor's metric name, verbatim. */
  readonly name: string;
  readonly type: MetricType;
  /** The vendor's HELP text, verbatim where the vendor prints one. */
  readonly help: string;
  /** Every label key the family can carry, in the vendor's order. */
  readonly labels: readonly string[];
}

export interface Sample {
  readonly family: MetricFamily;
  /** Label values by key; a key the series does not carry is absent (never an empty string). */
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
  /** For counters: simulated ms when the counter last started from zero. */
  readonly startMs?: number;
}

/** A series' label set, as a Sample carries it (seriesLabels makes one). */
export type LabelSet = Readonly<Record<string, string>>;

/**
 * Series as data: one place per series, its family, label set, value and start in four columns
 * (issue 29's series kept as data rather than as objects). A platform run kept an object per
 * series, 446,000 of them (37 MiB), each marked again by every full garbage collection; as
 * columns, a series is four slots in four lists, its value a number held unboxed among the others.
 * A consumer that wants objects reads `sample(at)` or `samples()`, made when read.
 */
export class SeriesColumns {
  families: MetricFamily[] = [];
  labels: LabelSet[] = [];
  /** Numbers only, so V8 keeps them unboxed in one block. */
  values: number[] = [];
  /** A counter's start, simulated ms; NaN for a series without one. */
  starts: number[] = [];
  /** How many places are listed. */
  count = 0;
  /** Whether the lists hold no room past `count` (fit). */
  private fitted = false;

  /** The series of `samples` (a source that lists objects: a test's, the exporters' own metrics). */
  static of(samples: readonly Sample[]): SeriesColumns {
    const series = new SeriesColumns();
    for (let i = 0; i < samples.length; i++) {
      const s = samples[i] as Sample;
      series.add(s.family, s.labels, s.value, s.startMs);
    }
    return series;
  }

  /**
   * The same series in lists of their size: for series made once and kept while their state holds
   * (kube-state-metrics' pods, TargetSeries.keep). A list filled by writes holds up to half again
   * and 16 places more than it used: a platform run's 5,500 kept pod states, about 18 series each,
   * held 7.5 MiB of lists.
   */
  fit(): this {
    if (this.fitted) return this;
    const count = this.count;
    this.families = this.families.slice(0, count);
    this.labels = this.labels.slice(0, count);
    this.values = this.values.slice(0, count);
    this.starts = this.starts.slice(0, count);
    this.fitted = true;
    return this;
  }

  /** Lists the series of `family` with `labels` (a kept series label set: seriesLabels) at `value`; a counter with its start. */
  add(family: MetricFamily, labels: LabelSet, value: number, startMs?: number): void {
    this.fitted = false;
    const at = this.count++;
    this.families[at] = family;
    this.labels[at] = labels;
    this.values[at] = value;
    this.starts[at] = startMs ?? Number.NaN;
  }

  /** Lists `other`'s series after these. */
  append(other: SeriesColumns): void {
    // An index, not for…of: an iterator result per call cost 1.6 MiB of a platform frame.
    for (let i = 0; i < other.count; i++)
      this.add(other.families[i] as MetricFamily, other.labels[i] as LabelSet, other.values[i] as number, other.startAt(i));
  }

  /** The start of the series at `at`, if it has one. */
  startAt(at: number): number | undefined {
    const start = this.starts[at] as number;
    return Number.isNaN(start) ? undefined : start;
  }

  /** The series at `at` as a Sample of its own. */
  sample(at: number): Sample {
    return plainSample(this.families[at] as MetricFamily, this.labels[at] as LabelSet, this.values[at] as number, this.startAt(at));
  }

  /** Every series as a Sample of its own, in order. */
  samples(): Sample[] {
    return Array.from({ length: this.count }, (_, at) => this.sample(at));
  }

  /** Starts the list anew, written over from its first place. */
  protected restart(): void {
    this.count = 0;
  }

  /** Drops what lies past the listed places, which would keep label sets alive (V8 shortens a list in place). */
  protected trim(): void {
    const count = this.count;
    if (this.families.length === count) return;
    this.families.length = count;
    this.labels.length = count;
    this.values.length = count;
    this.starts.length = count;
  }
}

/**
 * A target's series from one collect to the next, as columns written over at every collect:
 * sources list a target's series in a stable order and keep a series' label set while its subject
 * lives, so a collect of a steady cluster writes the same label sets in the same places and makes
 * no object at all.
 *
 * What a collect lists is valid until the target's next collect, which writes over it.
 */
export class TargetSeries extends SeriesColumns {
  /** Starts a collect of the target. */
  begin(): this {
    this.restart();
    return this;
  }

  /**
   * Lists series the source keeps itself, made once for a state that has not changed since
   * (kube-state-metrics' pods): a series is either kept by its source or listed by add, never both.
   */
  keep(series: SeriesColumns): void {
    this.append(series.fit());
  }

  /** Ends the collect: the series it listed. */
  end(): SeriesColumns {
    this.trim();
    return this;
  }
}

/** Each of a source's targets' series, by the target (which the source keeps for its node's life), made the first time. */
export class SeriesByTarget {
  private readonly byTarget = new Map<ScrapeTarget, TargetSeries>();

  /** The target's series, its collect begun (TargetSeries.begin). */
  begin(target: ScrapeTarget): TargetSeries {
    let series = this.byTarget.get(target);
    if (series === undefined) {
      series = new TargetSeries();
      this.byTarget.set(target, series);
    }
    return series.begin();
  }
}

/** A target's series listed as columns (a TargetSeries' collect): its samples made when read. */
class ListedTarget implements TargetSamples {
  constructor(
    readonly target: ScrapeTarget,
    readonly series: SeriesColumns,
  ) {}

  get samples(): readonly Sample[] {
    return this.series.samples();
  }
}

/** The target with the series a collect listed (TargetSeries.end). */
export function listedTarget(target: ScrapeTarget, series: SeriesColumns): TargetSamples {
  return new ListedTarget(target, series);
}

/** The target's series as columns: as its source listed them, or made from its samples. */
export function seriesOf(target: TargetSamples): SeriesColumns {
  return target.series ?? SeriesColumns.of(target.samples);
}

/**
 * The targets with their samples as they are now, for a consumer that keeps a frame past the
 * target's next collect (a test comparing instants, a report over a run): what a collect lists is
 * valid only until then (TargetSeries).
 */
export function targetsKept(targets: readonly TargetSamples[]): TargetSamples[] {
  // A listed target's samples are made anew when read: already its own.
  return targets.map((t) => ({ target: t.target, samples: t.series?.samples() ?? samplesKept(t.samples) }));
}

/** The samples as they are now (targetsKept): plain objects of their own. */
export function samplesKept(samples: readonly Sample[]): Sample[] {
  return samples.map(({ family, labels, value, startMs }) => plainSample(family, labels, value, startMs));
}

/** A Sample of its own: a key it does not carry is absent (no `startMs: undefined`). */
function plainSample(family: MetricFamily, labels: LabelSet, value: number, startMs: number | undefined): Sample {
  return startMs === undefined ? { family, labels, value } : { family, labels, value, startMs };
}

/** One emulated scrape target: what a collector's prometheus receiver would scrape. */
export interface ScrapeTarget {
  /** Prometheus job name (the collector's `service.name`). */
  readonly job: string;
  readonly host: string;
  readonly port: number;
  readonly path: string;
  /** Which node the target runs on, when it is a per-node exporter. */
  readonly node?: string;
  /** How Kubernetes service discovery sees the exporter, where its install is pinned. */
  readonly kubernetes?: KubernetesEndpoint;
  /**
   * Labels discovery gives the target beside job and instance, which its series then carry: the
   * kubelet's `metrics_path`, which tells its two endpoints on one port apart.
   */
  readonly labels?: Readonly<Record<string, string>>;
}

/**
 * The exporter as a Service's endpoint: what Prometheus' Kubernetes discovery (role endpoints)
 * attaches to the target and a ServiceMonitor's generated relabelling turns into the target
 * labels `namespace`, `service`, `pod` (or `node`), `container`, `job` and `endpoint`.
 */
export interface KubernetesEndpoint {
  readonly namespace: string;
  readonly service: string;
  /** The Service's labels (a ServiceMonitor selects on them and may take its job from one). */
  readonly serviceLabels: Readonly<Record<string, string>>;
  /** The name of the Service port the endpoint serves. */
  readonly portName: string;
  /**
   * What the endpoint's address refers to: an exporter's pod and the container that serves the
   * port, or its node (the kubelet's Service, whose endpoints the Prometheus Operator keeps as the
   * nodes' addresses: target kind Node; the target's `node` names it).
   */
  readonly address: { readonly pod: string; readonly container: string } | { readonly node: true };
}

export interface TargetSamples {
  readonly target: ScrapeTarget;
  /** Its series, each a Sample of its own (made when read, where the source lists columns). */
  readonly samples: readonly Sample[];
  /**
   * The same series as columns, where the source lists them so (TargetSeries): what a scrape reads
   * without an object per series (seriesOf reads either).
   */
  readonly series?: SeriesColumns;
}

/**
 * Where a source's targets run, which decides the shard that emits them (shard.ts): on every node
 * (a DaemonSet's pod: a shard emits its own nodes'), or once for the cluster, whole on one shard —
 * the shard of its rank, ranks counted from 0 for the largest. A cluster-wide source run as
 * several instances (kube-state-metrics' shards) takes ranks `clusterWide` … `clusterWide + instances − 1`.
 */
export type Placement = { readonly perNode: true } | { readonly clusterWide: number; readonly instances?: number };

/** The part of the cluster a collect serves: a shard of the run (shard.ts's ShardFilter); without one, all of it. */
export interface Share {
  /** Whether a per-node source's targets on the node are collected. */
  ownsNode(node: string): boolean;
  /** Whether the cluster-wide target of this rank (Placement) is collected. */
  ownsClusterWide(rank: number): boolean;
}

/** A source of metrics: a catalogue of families and a way to sample them from the cluster. */
export interface MetricConstruct {
  /**
   * The source's one name: its folder here, its ids' prefix and signals/<area>.md, where its
   * families are documented (`just signal-fidelity` fails on an area without that file).
   */
  readonly area: string;
  readonly families: readonly MetricFamily[];
  readonly placement: Placement;
  /** Every target's samples at the view's time, or only those `share` owns, when given. */
  collect(view: ClusterView, share?: Share): TargetSamples[];
}

/**
 * A series' label set is made once (seriesLabels) on this prototype, which marks it as one, and is
 * never changed after; an encoder that meets it again — a source keeps it while its subject
 * lives, or shares it between families — writes what it kept in a slot of the label set, hidden
 * from walks of its keys and from spreads (Object.defineProperty, not enumerable). Each encoding
 * has its own slot.
 */
export const SERIES_LABELS: object = Object.freeze(Object.create(Object.prototype));
/** The slot of a label set's OTLP `attributes` entries (gpusynth's metrics encoder). */
export const KEPT_OTLP: unique symbol = Symbol("the label set's OTLP attributes");
/** The slot of a label set's Prometheus text (`{k="v",…}`, exposition.ts). */
export const KEPT_TEXT: unique symbol = Symbol("the label set's exposition text");
/** The slot of a label set's OTLP JSON attributes (`[{"key":…,"value":{…}},…]`, delivery/json-metrics.ts). */
export const KEPT_JSON: unique symbol = Symbol("the label set's OTLP JSON attributes");

/**
 * The same text as one flat string, for text kept with a label set. V8 keeps a string made by
 * concatenation as a tree of its pieces until something reads it by character; reading one
 * flattens it in place. Kept as trees, the OTLP JSON of a live platform run's label sets was 8.7
 * million pieces (265 MiB), each marked again by every full garbage collection.
 */
export function flattened(text: string): string {
  text.charCodeAt(0);
  return text;
}

/** In a family's label list: any number of kube-state-metrics converted labels (label_<key>). */
export const LABEL_PATTERN = "label_*";

/**
 * The labels a family's series carries: only the family's keys, in the family's order, and
 * none with an empty value (the collector's prometheus receiver drops those).
 */
export function seriesLabels(family: MetricFamily, labels: Readonly<Record<string, string | undefined>>): Readonly<Record<string, string>> {
  const kept: Record<string, string> = Object.create(SERIES_LABELS);
  for (const key of family.labels) {
    if (key === LABEL_PATTERN) {
      // kube-state-metrics' converted Kubernetes labels: whatever label_* keys the caller gives.
      for (const [k, v] of Object.entries(labels)) if (k.startsWith("label_") && v !== undefined && v !== "") kept[k] = v;
      continue;
    }
    const v = labels[key];
    if (v !== undefined && v !== "") kept[key] = v;
  }
  return kept;
}

/**
 * What a source keeps by key from one collect to the next: a key a collect meets keeps its value,
 * and a key a collect does not meet is forgotten at the end of the next.
 */
export class KeptByKey<T> {
  private current = new Map<string, T>();
  private previous = new Map<string, T>();

  /** Starts a collect. */
  startCollect(): void {
    this.previous = this.current;
    this.current = new Map();
  }

  /** The value kept for `key`, made by `make` when there is none. */
  get(key: string, make: () => T): T {
    let value = this.current.get(key);
    if (value === undefined) {
      value = this.previous.get(key) ?? make();
      this.current.set(key, value);
    }
    return value;
  }
}

/** A subject's kept label sets, by family (KeptLabelSets.subject). */
export type SubjectLabelSets = Map<MetricFamily, Readonly<Record<string, string>>>;

/**
 * A source's label sets kept from one collect to the next, by subject (a node, a GPU, a workload,
 * a pod): a series keeps its label set — and what encoders kept with it — for as long as its
 * subject is collected, instead of a new one each scrape. A subject is a key naming it, or the
 * simulation's own object for it where that lives as long (a GPU), which saves making the key. A
 * subject's raw labels for a family must not change while it lives (put whatever changes in the
 * subject's key); a key that a collect does not meet is forgotten at the end of the next, an object
 * with the object.
 */
export class KeptLabelSets {
  private readonly keyed = new KeptByKey<SubjectLabelSets>();
  /**
   * Object subjects' label sets, for as long as the object lives: nothing to carry from one collect
   * to the next (a hyperscale collect met 115,000 subjects, each put in a new map).
   */
  private readonly objects = new WeakMap<object, SubjectLabelSets>();

  /** Starts a collect. */
  startCollect(): void {
    this.keyed.startCollect();
  }

  /** `subject`'s label sets: looked up once for the samples of several of its families (addIn, labelsIn). */
  subject(subject: string | object): SubjectLabelSets {
    if (typeof subject === "object") {
      let sets = this.objects.get(subject);
      if (sets === undefined) {
        sets = new Map();
        this.objects.set(subject, sets);
      }
      return sets;
    }
    return this.keyed.get(subject, () => new Map());
  }

  /**
   * The label sets of an object subject's parts, by their place in it (a node's GPUs, whose node
   * and index never change): one lookup for all of them instead of one per part (a hyperscale
   * collect of Run:ai's per-GPU families looked 102,400 GPUs up one by one).
   */
  partsOf(owner: object, count: number): readonly SubjectLabelSets[] {
    let parts = this.parts.get(owner);
    if (parts === undefined || parts.length !== count) {
      parts = Array.from({ length: count }, (): SubjectLabelSets => new Map());
      this.parts.set(owner, parts);
    }
    return parts;
  }
  private readonly parts = new WeakMap<object, SubjectLabelSets[]>();

  /** `family`'s label set for `subject`, made from `raw` the first time (as seriesLabels makes it). */
  of(subject: string | object, family: MetricFamily, raw: Readonly<Record<string, string | undefined>>): Readonly<Record<string, string>> {
    return labelSetIn(this.subject(subject), family, raw);
  }

  /** `family`'s label set from a subject's label sets (subject()), made from `raw` the first time. */
  labelsIn(
    sets: SubjectLabelSets,
    family: MetricFamily,
    raw: Readonly<Record<string, string | undefined>>,
  ): Readonly<Record<string, string>> {
    return labelSetIn(sets, family, raw);
  }

  /** Lists a gauge's series of `family` for `subject` in a target's series (TargetSeries). */
  add(
    out: TargetSeries,
    subject: string | object,
    family: MetricFamily,
    raw: Readonly<Record<string, string | undefined>>,
    value: number,
  ): void {
    out.add(family, this.of(subject, family, raw), value);
  }

  /** Lists a gauge's series of `family` from a subject's label sets (subject()) in a target's series. */
  addIn(
    out: TargetSeries,
    sets: SubjectLabelSets,
    family: MetricFamily,
    raw: Readonly<Record<string, string | undefined>>,
    value: number,
  ): void {
    out.add(family, this.labelsIn(sets, family, raw), value);
  }
}

function labelSetIn(
  sets: SubjectLabelSets,
  family: MetricFamily,
  raw: Readonly<Record<string, string | undefined>>,
): Readonly<Record<string, string>> {
  let labels = sets.get(family);
  if (labels === undefined) {
    labels = seriesLabels(family, raw);
    // A family whose series has the labels of another of the subject's shares that one's label set.
    for (const other of sets.values())
      if (sameLabels(other, labels)) {
        labels = other;
        break;
      }
    sets.set(family, labels);
  }
  return labels;
}

/** Whether two label sets hold the same keys, in the same order, with the same values. */
function sameLabels(a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean {
  const keys = Object.keys(a);
  const others = Object.keys(b);
  if (keys.length !== others.length) return false;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    if (key !== others[i] || a[key] !== b[key]) return false;
  }
  return true;
}

/**
 * Series of one subject's families made together (a kube-state-metrics pod's, remade when its
 * state changes, kept as columns: `series`), on one label set for each set of labels: the series of several families with the
 * same labels (a pod's PodScheduled and Ready conditions, its container's four state families)
 * share it, and what encoders keep with it. A platform scrape's 231,000 label sets were 157,000
 * different ones.
 */
export class SharedLabelSets {
  private readonly byText = new Map<string, LabelSet>();
  /** The series made here, in the order made. */
  readonly series = new SeriesColumns();

  /** Lists a series of `family` from raw labels (filtered by seriesLabels), on the label set its labels share with the subject's other series. */
  add(family: MetricFamily, raw: Readonly<Record<string, string | undefined>>, value: number, startMs?: number): void {
    this.series.add(family, this.of(family, raw), value, startMs);
  }

  /** `family`'s label set of `raw` (seriesLabels), the one already made where another family's series has the same labels. */
  of(family: MetricFamily, raw: Readonly<Record<string, string | undefined>>): LabelSet {
    const made = seriesLabels(family, raw);
    let text = "";
    for (const key in made) text += `${key}\u0000${made[key]}\u0000`;
    const known = this.byText.get(text);
    if (known !== undefined) return known;
    this.byText.set(text, made);
    return made;
  }
}

/** A log record as a collector log receiver would deliver it. */
export interface LogRecordOut {
  /** The log source's one name, as a metric source's area: signals/<area>.md documents the record's fields. */
  readonly area: string;
  /** Which receiver shape: the k8s_events receiver or filelog with the container operator. */
  readonly receiver: "k8s_events" | "filelog";
  readonly resource: Readonly<Record<string, string>>;
  readonly timeMs: UnixMs;
  /** 0 / absent: unspecified (filelog sets none without a severity parser). */
  readonly severityNumber?: number;
  readonly severityText?: string;
  readonly body: string;
  readonly attributes: Readonly<Record<string, string | number>>;
}
