/**
 * The shape of what an OpenTelemetry Collector's `prometheus` receiver sends after scraping a
 * real exporter, which gpusynth reproduces — opentelemetry-collector-contrib
 * receiver/prometheusreceiver at v0.161.0 (the release deploy/otelcol/builder.yaml builds, and
 * packages/cli/test/collector-scrape.test.ts compares with): `internal/transaction.go`,
 * `internal/prom_to_otlp.go`, `internal/metricfamily.go`. One ResourceMetrics per target and
 * scrape; the resource from the target's job, instance and discovery labels (CreateResource);
 * this scope; names verbatim; unit empty; counters monotonic cumulative sums, gauges gauges;
 * double values.
 */
import type { KubernetesEndpoint, MetricFamily, ScrapeTarget } from "@gpusynth/constructs";
import type { TargetScrape } from "./service-monitors.js";

/** Scope name since collector-contrib PR #34589 (Aug 2024); version = the collector build. */
export const RECEIVER_SCOPE_NAME = "github.com/open-telemetry/opentelemetry-collector-contrib/receiver/prometheusreceiver";
export const RECEIVER_SCOPE_VERSION = "0.161.0";

/**
 * The series the receiver's scrape loop adds to every scrape of a target, about the scrape
 * (Prometheus `scrape/scrape.go` at v0.314.0, the version receiver/prometheusreceiver v0.161.0
 * requires; names, types and HELP from the receiver's `internal/metadata.go`), carrying the
 * target's labels and none of the exporter's. gpusynth sends those it has values for: the
 * target answered, with so many samples, so many kept after metric relabelling. Not
 * `scrape_duration_seconds` (no scrape is timed) nor `scrape_series_added` (signals/receiver.md).
 */
export const SCRAPE_REPORT = {
  up: { id: "receiver.up", name: "up", type: "gauge", help: "The scraping was successful", labels: [] },
  samplesScraped: {
    id: "receiver.scrape_samples_scraped",
    name: "scrape_samples_scraped",
    type: "gauge",
    help: "The number of samples the target exposed",
    labels: [],
  },
  samplesPostRelabeling: {
    id: "receiver.scrape_samples_post_metric_relabeling",
    name: "scrape_samples_post_metric_relabeling",
    type: "gauge",
    help: "The number of samples remaining after metric relabeling was applied",
    labels: [],
  },
} as const satisfies Record<string, MetricFamily>;

const LOOPBACK = /^(localhost|127\.|0\.0\.0\.0$|::1$|\[::1\])/;

/**
 * The receiver's map from Kubernetes discovery's meta labels to resource attributes
 * (`kubernetesDiscoveryToResourceAttributes` in prom_to_otlp.go at v0.161.0), for the labels
 * gpusynth's discovery sets.
 */
const RESOURCE_OF_META_LABEL: Readonly<Record<string, string>> = {
  __meta_kubernetes_pod_name: "k8s.pod.name",
  __meta_kubernetes_pod_container_name: "k8s.container.name",
  __meta_kubernetes_namespace: "k8s.namespace.name",
  __meta_kubernetes_pod_node_name: "k8s.node.name",
  __meta_kubernetes_endpoint_node_name: "k8s.node.name",
};

/** The labels service discovery gives a target beside its address: job, instance, and Kubernetes' meta labels. */
export function discoveryLabels(target: ScrapeTarget): Record<string, string> {
  return {
    ...target.labels,
    job: target.job,
    instance: `${target.host}:${target.port}`,
    ...(target.kubernetes === undefined ? {} : kubernetesMetaLabels(target.kubernetes, target.node)),
  };
}

/**
 * The resource the receiver makes of a target from its job, instance and discovery labels
 * (CreateResource): the host and port are split from the instance (`server.port` empty where the
 * instance has none, as a ServiceMonitor that names the instance after the node leaves it).
 */
export function targetResourceAttributes(target: ScrapeTarget, scrape: TargetScrape): Record<string, string> {
  const [, host, port] = /^(.*):(\d+)$/.exec(scrape.instance) ?? [scrape.instance, scrape.instance, ""];
  const attributes: Record<string, string> = {
    "service.name": scrape.job,
    "service.instance.id": scrape.instance,
    "server.port": port as string,
    "url.scheme": "http",
  };
  if (!LOOPBACK.test(host as string)) attributes["server.address"] = host as string;
  if (target.kubernetes !== undefined)
    for (const [label, value] of Object.entries(kubernetesMetaLabels(target.kubernetes, target.node))) {
      const key = RESOURCE_OF_META_LABEL[label];
      if (key !== undefined && value !== "") attributes[key] = value;
    }
  return attributes;
}

/** A target's identity: its job, address and path (the kubelet serves two targets on one port). */
export function targetKey(target: ScrapeTarget): string {
  return `${target.job}/${target.host}:${target.port}${target.path}`;
}

/**
 * The meta labels Prometheus' Kubernetes discovery (role `endpoints`, the Prometheus Operator's
 * default for a ServiceMonitor) attaches to an endpoint backed by a pod: names from Prometheus'
 * kubernetes_sd_config documentation (signals/dcgm-exporter.md, "Scrape target").
 */
function kubernetesMetaLabels(endpoint: KubernetesEndpoint, node: string | undefined): Record<string, string> {
  const labels: Record<string, string> = {
    __meta_kubernetes_namespace: endpoint.namespace,
    __meta_kubernetes_service_name: endpoint.service,
    __meta_kubernetes_endpoint_port_name: endpoint.portName,
    __meta_kubernetes_endpoint_ready: "true",
  };
  const { address } = endpoint;
  if ("pod" in address) {
    labels.__meta_kubernetes_endpoint_address_target_kind = "Pod";
    labels.__meta_kubernetes_endpoint_address_target_name = address.pod;
    labels.__meta_kubernetes_pod_name = address.pod;
    labels.__meta_kubernetes_pod_container_name = address.container;
    labels.__meta_kubernetes_pod_phase = "Running";
    labels.__meta_kubernetes_pod_ready = "true";
    if (node !== undefined) labels.__meta_kubernetes_pod_node_name = node;
  } else if (node !== undefined) {
    // A node's address (the Prometheus Operator's kubelet endpoints: nodeName and a Node targetRef).
    labels.__meta_kubernetes_endpoint_address_target_kind = "Node";
    labels.__meta_kubernetes_endpoint_address_target_name = node;
    labels.__meta_kubernetes_endpoint_node_name = node;
  }
  for (const [key, value] of Object.entries(endpoint.serviceLabels)) {
    // Prometheus sanitises a label key into a label name (every other character becomes `_`).
    const name = key.replace(/[^a-zA-Z0-9_]/g, "_");
    labels[`__meta_kubernetes_service_label_${name}`] = value;
    labels[`__meta_kubernetes_service_labelpresent_${name}`] = "true";
  }
  return labels;
}
