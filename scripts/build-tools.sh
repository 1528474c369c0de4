#!/usr/bin/env bash
# The Go tools of the real pipeline the tests drive, built from their own modules at pinned
# releases into .cache/ (never committed):
#
#   otelcol       the OpenTelemetry Collector distribution of deploy/otelcol/builder.yaml, built by
#                 the Collector Builder at the manifest's release -> .cache/otelcol/otelcol-gpusynth
#   otelcol-node  the node agent's distribution (filelog, file_storage) of
#                 deploy/otelcol-node/builder.yaml    -> .cache/otelcol-node/otelcol-gpusynth-node
#   prometheus3   Prometheus 3 (its OTLP receiver; Debian's prometheus is 2.x)
#                                                              -> .cache/prometheus3/prometheus
#   victorialogs  VictoriaLogs, a log backend that takes OTLP logs -> .cache/victorialogs/victoria-logs
#   helm          Helm v4, for the chart's lint and render (just helm-test) -> .cache/helm/helm
#   kube-prometheus  kube-prometheus' rendered rules and dashboards at its pinned release: the
#                 PrometheusRules of the Kubernetes mixin, kube-state-metrics and node-exporter,
#                 kube-prometheus' own, and the Grafana dashboards' ConfigMaps, copied from the
#                 release's manifests/ (fetched as a Go module: kube-prometheus has a go.mod, and the
#                 proxy serves the tag with its checksum) -> .cache/kube-prometheus/*.yaml
#
# Each is rebuilt only when its pin (or, for the collector, the manifest) changes: a stamp beside
# the binary records what it was built from. The Go module and build caches are Go's defaults
# (outside the checkout), so a fresh clone on a machine that built them once links in seconds
# instead of compiling for minutes. Go 1.26 on the PATH; the Go module proxy reachable.
# Usage: scripts/build-tools.sh [otelcol|otelcol-node|prometheus3|victorialogs|helm|kube-prometheus ...] (default: all six).
set -euo pipefail
cd "$(dirname "$0")/.."

# One release for the builder and every module of a distribution (see each manifest's header).
OTELCOL_BUILDER=go.opentelemetry.io/collector/cmd/builder@v0.161.0
OTELCOL_MANIFEST=deploy/otelcol/builder.yaml
OTELCOL_NODE_BUILDER=go.opentelemetry.io/collector/cmd/builder@v0.160.0
OTELCOL_NODE_MANIFEST=deploy/otelcol-node/builder.yaml
# Prometheus 3.x releases are the module's v0.3xx tags: v0.316.0 is Prometheus 3.16.0.
PROMETHEUS3=github.com/prometheus/prometheus/cmd/prometheus@v0.316.0
VICTORIALOGS=github.com/VictoriaMetrics/VictoriaLogs/app/victoria-logs@v1.52.2
HELM=helm.sh/helm/v4/cmd/helm@v4.3.2
# kube-prometheus v0.18.0: the release whose manifests gpusynth's kube-prometheus.yml and docs cite.
KUBE_PROMETHEUS=github.com/prometheus-operator/kube-prometheus@v0.18.0
# What is read from its manifests/: the rules of the components gpusynth emulates and the
# dashboards (the Prometheus, Alertmanager, Grafana and Operator rules watch the monitoring stack).
KUBE_PROMETHEUS_FILES=(
  kubernetesControlPlane-prometheusRule.yaml
  kubeStateMetrics-prometheusRule.yaml
  nodeExporter-prometheusRule.yaml
  kubePrometheus-prometheusRule.yaml
  grafana-dashboardDefinitions.yaml
)

tools=("$@")
[ "${#tools[@]}" -gt 0 ] || tools=(otelcol otelcol-node prometheus3 victorialogs helm kube-prometheus)

# True when $1/.stamp holds exactly $2: the binary there was built from that pin.
built_from() { [ -f "$1/.stamp" ] && [ "$(cat "$1/.stamp")" = "$2" ]; }

# go install of a main package at a pinned version into folder $2, stamped.
install_pinned() {
  local folder=$1 package=$2
  if built_from "$folder" "$package"; then
    echo "$package: already built in $folder"
    return
  fi
  echo "$package: building into $folder (minutes on a cold Go cache)"
  rm -rf "$folder" && mkdir -p "$folder"
  GOBIN="$PWD/$folder" go install -trimpath -ldflags "-s -w" "$package"
  echo "$package" > "$folder/.stamp"
}

# A collector distribution: the builder at $1 builds manifest $2 (whose output_path is
# $3/build, relative to the repository root) into binary $3/$4.
build_otelcol() {
  local builder=$1 manifest=$2 folder=$3 binary=$4 stamp
  stamp="$builder $(sha256sum "$manifest" | cut -d' ' -f1)"
  if built_from "$folder" "$stamp" && [ -x "$folder/$binary" ]; then
    echo "$binary: already built from $manifest in $folder"
    return
  fi
  echo "$binary: building $manifest into $folder (about 8 minutes on a cold Go cache)"
  rm -rf "$folder" && mkdir -p "$folder/bin"
  GOBIN="$PWD/$folder/bin" go install "$builder"
  "$folder/bin/builder" --config "$manifest" --ldflags "-s -w" > "$folder/build.log" 2>&1 || {
    tail -n 40 "$folder/build.log"
    exit 1
  }
  mv "$folder/build/$binary" "$folder/$binary"
  echo "$stamp" > "$folder/.stamp"
  "$folder/$binary" --version
}

# kube-prometheus' manifests at the pinned release, as its repository renders them (jsonnet, committed).
fetch_kube_prometheus() {
  local folder=.cache/kube-prometheus stamp="$KUBE_PROMETHEUS ${KUBE_PROMETHEUS_FILES[*]}" source
  if built_from "$folder" "$stamp"; then
    echo "kube-prometheus: already in $folder"
    return
  fi
  echo "kube-prometheus: fetching $KUBE_PROMETHEUS's manifests into $folder"
  rm -rf "$folder" && mkdir -p "$folder"
  source="$(go mod download -json "$KUBE_PROMETHEUS" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
  for file in "${KUBE_PROMETHEUS_FILES[@]}"; do cp "$source/manifests/$file" "$folder/$file"; done
  chmod u+w "$folder"/*.yaml
  echo "$stamp" > "$folder/.stamp"
}

for tool in "${tools[@]}"; do
  case "$tool" in
    otelcol) build_otelcol "$OTELCOL_BUILDER" "$OTELCOL_MANIFEST" .cache/otelcol otelcol-gpusynth ;;
    otelcol-node) build_otelcol "$OTELCOL_NODE_BUILDER" "$OTELCOL_NODE_MANIFEST" .cache/otelcol-node otelcol-gpusynth-node ;;
    prometheus3) install_pinned .cache/prometheus3 "$PROMETHEUS3" ;;
    victorialogs) install_pinned .cache/victorialogs "$VICTORIALOGS" ;;
    helm) install_pinned .cache/helm "$HELM" ;;
    kube-prometheus) fetch_kube_prometheus ;;
    *)
      echo "build-tools: unknown tool \"$tool\" (expected otelcol, otelcol-node, prometheus3, victorialogs, helm or kube-prometheus)" >&2
      exit 2
      ;;
  esac
done
