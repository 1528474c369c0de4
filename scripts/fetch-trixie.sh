#!/usr/bin/env bash
# Tools the tests drive that Debian packages in trixie only: VictoriaMetrics 1.112 (a real OTLP
# receiver: the single-node server and vmagent) and kustomize 5.6 (renders deploy/kubernetes).
# Their binaries are static and run on bookworm. Each .deb is fetched with apt-get download from
# a private trixie sources list and unpacked with dpkg-deb -x into .cache/<package> — nothing is
# installed into the system. Usage: scripts/fetch-trixie.sh [package ...] (default: both).
set -euo pipefail
cd "$(dirname "$0")/.."
packages=("$@")
[ "${#packages[@]}" -gt 0 ] || packages=(victoria-metrics kustomize)
apt_dir="$PWD/.cache/trixie-apt"
apt_options=(
  -o "Dir::Etc::SourceList=$apt_dir/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache" -o APT::Get::List-Cleanup=0
  -o APT::Sandbox::User=root
)
updated=0
for package in "${packages[@]}"; do
  target=".cache/$package"
  if [ -d "$target/usr/bin" ]; then
    echo "$package: already in $target"
    continue
  fi
  if [ "$updated" = 0 ]; then
    mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/download"
    echo "deb http://deb.debian.org/debian trixie main" > "$apt_dir/sources.list"
    apt-get "${apt_options[@]}" update -qq
    updated=1
  fi
  (cd "$apt_dir/download" && apt-get "${apt_options[@]}" download "$package")
  mkdir -p "$target"
  dpkg-deb -x "$(ls "$apt_dir"/download/"${package}"_*.deb | head -n 1)" "$target"
  echo "$package: unpacked into $target"
done
