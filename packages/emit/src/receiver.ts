/**
 * The shape of what an OpenTelemetry Collector's `prometheus` receiver sends after scraping a
 * real exporter, which gpusynth reproduces (opentelemetry-collector-contrib
 * receiver/prometheusreceiver at v0.145.0; internal/transaction.go, prom_to_otlp.go,
 * metricfamily.go, metrics_adjuster.go, read at commits 3513e3e5, 67a3f1d3, abc5e17d, a097983e):
 * one ResourceMetrics per target and scrape; resource service.name = job, service.instance.id
 * = host:port, server.address (when not loopback), server.port, url.scheme; this scope; names
 * verbatim; unit empty; counters monotonic cumulative sums, gauges gauges; double values.
 */
import type { ScrapeTarget } from "@gpusynth/constructs";

/** Scope name since collector-contrib PR #34589 (Aug 2024); version = the collector build. */
export const RECEIVER_SCOPE_NAME = "github.com/open-telemetry/opentelemetry-collector-contrib/receiver/prometheusreceiver";
export const RECEIVER_SCOPE_VERSION = "0.145.0";

const LOOPBACK = /^(localhost|127\.|0\.0\.0\.0$|::1$|\[::1\])/;

export function targetResourceAttributes(target: ScrapeTarget): Record<string, string> {
  const attributes: Record<string, string> = {
    "service.name": target.job,
    "service.instance.id": `${target.host}:${target.port}`,
    "server.port": String(target.port),
    "url.scheme": "http",
  };
  if (!LOOPBACK.test(target.host)) attributes["server.address"] = target.host;
  return attributes;
}

export function targetKey(target: ScrapeTarget): string {
  return `${target.job}/${target.host}:${target.port}`;
}
