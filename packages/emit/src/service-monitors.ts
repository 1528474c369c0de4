/**
 * Scraping through ServiceMonitors: the labels a target's series carry when the collector's
 * prometheus receiver finds the exporters through the ServiceMonitors the cluster deploys (the
 * OpenTelemetry Operator's Target Allocator with `prometheusCR` enabled generates its scrape
 * configuration with the Prometheus Operator's own generator), as a blueprint's
 * `telemetry.serviceMonitors` declares.
 *
 * The ServiceMonitors and what the Operator makes of each are those of
 * deploy/prometheus/kube-prometheus.yml, which says where each comes from (kube-prometheus
 * v0.18.0's kubelet and node-exporter ServiceMonitors, the GPU Operator's dcgm-exporter one; the
 * Prometheus Operator v0.93.0's relabelling for role `endpoints`), and
 * packages/cli/test/collector-scrape.test.ts compares this emulation with a real collector
 * scraping through that file. A target no ServiceMonitor selects keeps its exporter's labels,
 * as that file's last job keeps them.
 */
import { type KubernetesEndpoint, type ScrapeTarget, SERIES_LABELS } from "@gpusynth/constructs";

type Labels = Readonly<Record<string, string>>;

/** One endpoint of a ServiceMonitor. */
interface ServiceMonitor {
  /** The path it scrapes (`/metrics` unless it names one). */
  readonly path?: string;
  /** The namespace the ServiceMonitor's namespaceSelector keeps; any when absent. */
  readonly namespace?: string;
  /** Its selector's matchLabels on the Service. */
  readonly selector: Labels;
  /** The Service port its endpoint scrapes. */
  readonly port: string;
  /** The Service label whose value becomes `job` (`jobLabel`). */
  readonly jobLabel: string;
  readonly honorLabels: boolean;
  /** The endpoint's own relabelings, after the Operator's. */
  readonly relabel?: (labels: Record<string, string>, target: ScrapeTarget) => void;
  /** The endpoint's metricRelabelings that drop a series: whether this one goes. */
  readonly drops?: (name: string, labels: Labels) => boolean;
}

/** An endpoint of kube-prometheus' kubelet ServiceMonitor: its path, written into `metrics_path`, and its metricRelabelings' drops. */
function kubeletEndpoint(path: string, drops?: ServiceMonitor["drops"]): ServiceMonitor {
  return {
    path,
    namespace: "kube-system",
    selector: { "app.kubernetes.io/name": "kubelet" },
    port: "https-metrics",
    jobLabel: "app.kubernetes.io/name",
    honorLabels: true,
    relabel: (labels, target) => {
      labels.metrics_path = target.path;
    },
    ...(drops === undefined ? {} : { drops }),
  };
}

const MONITORS: readonly ServiceMonitor[] = [
  // The GPU Operator v26.7.0's (assets/state-dcgm-exporter/0500_service_monitor.yaml @10ee5b36).
  { selector: { app: "nvidia-dcgm-exporter" }, port: "gpu-metrics", jobLabel: "app", honorLabels: false },
  // kube-prometheus v0.18.0's kubelet ServiceMonitor
  // (manifests/kubernetesControlPlane-serviceMonitorKubelet.yaml @4775d44d): the kubelet's own
  // /metrics (its metricRelabelings drop families of older kubelets, none of which gpusynth emits)…
  kubeletEndpoint("/metrics"),
  // … and its cAdvisor endpoint.
  kubeletEndpoint(
    "/metrics/cadvisor",
    (name, labels) =>
      /^container_(network_tcp_usage_total|network_udp_usage_total|tasks_state|cpu_load_average_10s)$/.test(name) ||
      (/^(container_spec_.*|container_file_descriptors|container_sockets|container_threads_max|container_threads|container_start_time_seconds|container_last_seen)$/.test(
        name,
      ) &&
        !labels.pod &&
        !labels.namespace) ||
      (name === "container_blkio_device_usage_total" && Boolean(labels.container)),
  ),
  // kube-prometheus v0.18.0's node-exporter ServiceMonitor (manifests/nodeExporter-serviceMonitor.yaml).
  {
    selector: {
      "app.kubernetes.io/component": "exporter",
      "app.kubernetes.io/name": "node-exporter",
      "app.kubernetes.io/part-of": "kube-prometheus",
    },
    port: "https",
    jobLabel: "app.kubernetes.io/name",
    honorLabels: false,
    relabel: (labels, target) => {
      if (target.node !== undefined) labels.instance = target.node;
    },
  },
];

function selects(monitor: ServiceMonitor, endpoint: KubernetesEndpoint, path: string): boolean {
  return (
    (monitor.path ?? "/metrics") === path &&
    (monitor.namespace === undefined || monitor.namespace === endpoint.namespace) &&
    endpoint.portName === monitor.port &&
    Object.entries(monitor.selector).every(([key, value]) => endpoint.serviceLabels[key] === value)
  );
}

/** How the receiver scrapes one target: its job and instance, and what it does to each series' labels. */
export interface TargetScrape {
  readonly job: string;
  readonly instance: string;
  /** A series' labels as stored (the same object for the same input object), or undefined where the scrape drops it. */
  readonly labelsOf: (name: string, labels: Labels) => Labels | undefined;
}

/**
 * The plain scrape: job, instance and the target's other labels from discovery, every series as
 * the exporter writes it with those labels added (honor_labels false: an exporter's label of the
 * same name is kept as exported_<name>).
 */
export function plainScrape(target: ScrapeTarget): TargetScrape {
  const instance = `${target.host}:${target.port}`;
  if (target.labels === undefined) return { job: target.job, instance, labelsOf: (_name, labels) => labels };
  return { job: target.job, instance, labelsOf: withTargetLabels(target.labels, false) };
}

/**
 * A series' labels with its target's added, as Prometheus' scrape loop adds them
 * (`mutateSampleLabels`): the exporter's win under honor_labels, and are otherwise kept as
 * exported_<name> where the target sets the same name (or job, instance). The same input object
 * gives the same output object, so a series keeps its identity from scrape to scrape; the output
 * of a series' label set (catalogue.ts SERIES_LABELS: made once, never changed) is one too, so
 * the encoders keep what they write for it (the kubelet's series, a third of a large cluster's,
 * carry their target's metrics_path: without it their attributes were written anew every scrape).
 */
function withTargetLabels(targetLabels: Labels, honorLabels: boolean): (name: string, series: Labels) => Labels {
  const stored = new WeakMap<Labels, Labels>();
  return (_name, series) => {
    let merged = stored.get(series);
    if (merged === undefined) {
      const out: Record<string, string> = Object.getPrototypeOf(series) === SERIES_LABELS ? Object.create(SERIES_LABELS) : {};
      if (honorLabels) Object.assign(out, targetLabels, series);
      else {
        for (const [key, value] of Object.entries(series))
          out[Object.hasOwn(targetLabels, key) || key === "job" || key === "instance" ? `exported_${key}` : key] = value;
        Object.assign(out, targetLabels);
      }
      merged = out;
      stored.set(series, merged);
    }
    return merged;
  };
}

/** How `target` is scraped through the ServiceMonitor that selects it, or plainly where none does. */
export function serviceMonitorScrape(target: ScrapeTarget): TargetScrape {
  const endpoint = target.kubernetes;
  const monitor = endpoint === undefined ? undefined : MONITORS.find((m) => selects(m, endpoint, target.path));
  if (endpoint === undefined || monitor === undefined) return plainScrape(target);
  // Discovery's own target labels first (kept unless a relabeling replaces them), then the
  // Operator's relabelling for role endpoints, then the endpoint's own.
  const labels: Record<string, string> = { ...target.labels, instance: `${target.host}:${target.port}` };
  if ("pod" in endpoint.address) {
    labels.pod = endpoint.address.pod;
    labels.container = endpoint.address.container;
  } else if (target.node !== undefined) labels.node = target.node;
  labels.namespace = endpoint.namespace;
  labels.service = endpoint.service;
  labels.job = endpoint.serviceLabels[monitor.jobLabel] || endpoint.service;
  labels.endpoint = monitor.port;
  monitor.relabel?.(labels, target);
  const { job, instance, ...targetLabels } = labels as Record<string, string> & { job: string; instance: string };
  const merge = withTargetLabels(targetLabels, monitor.honorLabels);
  return {
    job,
    instance,
    labelsOf: (name, series) => (monitor.drops?.(name, series) === true ? undefined : merge(name, series)),
  };
}
