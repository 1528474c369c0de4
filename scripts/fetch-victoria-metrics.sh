#!/usr/bin/env bash
# VictoriaMetrics (single-node server and vmagent) for the tests that send gpusynth's OTLP to a
# real receiver. Debian packages it in trixie only (1.112); its static binaries run on bookworm.
# The .deb is fetched with apt-get download from a private trixie sources list and unpacked with
# dpkg-deb -x into .cache/victoria-metrics — nothing is installed into the system.
set -euo pipefail
cd "$(dirname "$0")/.."
target=.cache/victoria-metrics
if [ -x "$target/usr/bin/victoria-metrics" ]; then
  echo "victoria-metrics: already in $target"
  exit 0
fi
apt_dir="$PWD/.cache/trixie-apt"
mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/download" "$target"
echo "deb http://deb.debian.org/debian trixie main" > "$apt_dir/sources.list"
apt_options=(
  -o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o APT::Get::List-Cleanup=0
  -o APT::Sandbox::User=root
)
apt-get "${apt_options[@]}" update -qq
(cd "$apt_dir/download" && apt-get "${apt_options[@]}" download victoria-metrics)
dpkg-deb -x "$apt_dir"/download/victoria-metrics_*.deb "$target"
echo "victoria-metrics: unpacked $(ls "$apt_dir"/download/) into $target"
