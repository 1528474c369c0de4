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
#   mixins        the rules and alerts of node_exporter's and kube-state-metrics' mixins as
#                 kube-prometheus configures them (deploy/kube-prometheus/<exporter>.jsonnet),
#                 rendered by go-jsonnet from each exporter's module at its pinned release
#                                                              -> .cache/mixins/<exporter>.json
#
# Each is rebuilt only when its pin (or, for the collector, the manifest) changes: a stamp beside
# the binary records what it was built from. The Go module and build caches are Go's defaults
# (outside the checkout), so a fresh clone on a machine that built them once links in seconds
# instead of compiling for minutes. Go 1.26 on the PATH; the Go module proxy reachable.
# Usage: scripts/build-tools.sh [otelcol|otelcol-node|prometheus3|victorialogs|helm|mixins ...] (default: all six).
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
JSONNET=github.com/google/go-jsonnet/cmd/jsonnet@v0.22.0
# Each mixin: the module and folder it is read from. kube-prometheus v0.18.0 deploys node-exporter
# v1.11.1 (manifests/nodeExporter-daemonset.yaml); kube-state-metrics is the release gpusynth emulates.
MIXINS=(
  "node-exporter github.com/prometheus/node_exporter@v1.11.1 docs/node-mixin"
  "kube-state-metrics k8s.io/kube-state-metrics/v2@v2.13.0 jsonnet/kube-state-metrics-mixin"
)

tools=("$@")
[ "${#tools[@]}" -gt 0 ] || tools=(otelcol otelcol-node prometheus3 victorialogs helm mixins)

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

# Each mixin's rules and alerts, rendered with go-jsonnet into one Prometheus rule file per exporter.
render_mixins() {
  local folder=.cache/mixins stamp name module dir source
  stamp="$JSONNET ${MIXINS[*]} $(cat deploy/kube-prometheus/*.jsonnet | sha256sum | cut -d' ' -f1)"
  if built_from "$folder" "$stamp"; then
    echo "mixins: already rendered in $folder"
    return
  fi
  rm -rf "$folder" && mkdir -p "$folder"
  GOBIN="$PWD/$folder" go install -trimpath -ldflags "-s -w" "$JSONNET"
  for mixin in "${MIXINS[@]}"; do
    read -r name module dir <<< "$mixin"
    echo "mixins: rendering deploy/kube-prometheus/$name.jsonnet with $module's $dir"
    source="$(go mod download -json "$module" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')"
    "$folder/jsonnet" -J "$source/$dir" "deploy/kube-prometheus/$name.jsonnet" > "$folder/$name.json"
  done
  echo "$stamp" > "$folder/.stamp"
}

for tool in "${tools[@]}"; do
  case "$tool" in
    otelcol) build_otelcol "$OTELCOL_BUILDER" "$OTELCOL_MANIFEST" .cache/otelcol otelcol-gpusynth ;;
    otelcol-node) build_otelcol "$OTELCOL_NODE_BUILDER" "$OTELCOL_NODE_MANIFEST" .cache/otelcol-node otelcol-gpusynth-node ;;
    prometheus3) install_pinned .cache/prometheus3 "$PROMETHEUS3" ;;
    victorialogs) install_pinned .cache/victorialogs "$VICTORIALOGS" ;;
    helm) install_pinned .cache/helm "$HELM" ;;
    mixins) render_mixins ;;
    *)
      echo "build-tools: unknown tool \"$tool\" (expected otelcol, otelcol-node, prometheus3, victorialogs, helm or mixins)" >&2
      exit 2
      ;;
  esac
done
