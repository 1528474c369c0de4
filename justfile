# gpusynth tasks. `just` comes from the rust-just npm package: run `npm ci` first.
# Every recipe is also an npm script (npm run <recipe>; `just test` is `npm run test:unit`,
# `just check` is `npm test`).

set shell := ["bash", "-euo", "pipefail", "-c"]

# The project's own tools (tsc, biome, vitest) found directly, and recipes calling recipes through
# this just: npx spends half a second of CPU finding each, and `just check` made a dozen such calls.
export PATH := justfile_directory() / "node_modules/.bin" + ":" + env_var("PATH")

# Everything CI checks. The suite runs at normal priority with the static checks, signal-fidelity
# and the lab-check beside it at a lower one (nice): the suite spends part of its time waiting on
# child processes, receivers and wall-clock pacing, and they fill those gaps, while its
# timing-sensitive tests keep the CPU first. Their output is printed when the suite ends.
check: build
    #!/usr/bin/env bash
    set -uo pipefail
    out=$(mktemp -d)
    nice -n 10 "{{just_executable()}}" --no-deps static > "$out/static" 2>&1 &
    static=$!
    nice -n 10 "{{just_executable()}}" --no-deps signal-fidelity > "$out/signal-fidelity" 2>&1 &
    signals=$!
    nice -n 10 "{{just_executable()}}" --no-deps lab-check > "$out/lab-check" 2>&1 &
    lab=$!
    "{{just_executable()}}" --no-deps test
    failed=$?
    for step in static signal-fidelity lab-check; do
      pid=$static; [ "$step" = signal-fidelity ] && pid=$signals; [ "$step" = lab-check ] && pid=$lab
      if wait "$pid"; then echo "$step: ok"; else echo "$step: FAILED"; failed=1; fi
      cat "$out/$step"
    done
    rm -rf "$out"
    exit "$failed"

# The static checks at once (format, lint, the tests' types, generated files): each runs on one
# thread, so together they take the time of the longest. Each one's output is printed when it ends.
static: build
    #!/usr/bin/env bash
    set -uo pipefail
    out=$(mktemp -d)
    steps=(fmt-check lint typecheck gen-check)
    pids=()
    for step in "${steps[@]}"; do
      "{{just_executable()}}" --no-deps "$step" > "$out/$step" 2>&1 &
      pids+=($!)
    done
    failed=0
    for i in "${!steps[@]}"; do
      if wait "${pids[$i]}"; then echo "${steps[$i]}: ok"; else echo "${steps[$i]}: FAILED"; cat "$out/${steps[$i]}"; failed=1; fi
    done
    rm -rf "$out"
    exit "$failed"

# The TypeScript, then the command's bundle when the build moved (scripts/bundle-cli.mjs).
build:
    tsc -b
    node scripts/bundle-cli.mjs

fmt:
    biome format --write .

fmt-check:
    biome format .

lint:
    biome check --formatter-enabled=false .

typecheck: build
    tsc -p tsconfig.test.json

# Regenerate blueprints/blueprint.schema.json from the zod schema, signals/receiver-names.json
# from every path's real software (the collector's exporters, Prometheus 3, VictoriaMetrics:
# scripts/build-tools.sh and fetch-trixie.sh provide them), signals/name-fidelity.md from those
# measurements, signals/volume.md from runs of the shipped blueprints, and the determinism
# test's golden event-log hashes (the tests check that the last three still hold).
gen: build
    node scripts/gen-schema.mjs
    node scripts/measure-receiver-names.mjs
    node packages/cli/bin/gpusynth.js fidelity > signals/name-fidelity.md
    node scripts/gen-volume.mjs
    node scripts/gen-golden.mjs
    node scripts/gen-gpu-physics.mjs

gen-check: build
    node scripts/gen-schema.mjs --check
    node scripts/measure-receiver-names.mjs --check
    node scripts/gen-gpu-physics.mjs --check

# What shipped blueprints actually emit, compared with signals/ and cantfind.md.
# A larger young generation: a day of scheduler log lines is millions of short-lived strings.
signal-fidelity: build
    node --max-semi-space-size=128 packages/cli/bin/gpusynth.js check-signals

# Tests must not depend on each other, so the suite runs once with each file's tests in a random
# order, shuffled by a printed seed (`just race <seed>` replays that order).
test: build
    seed="${GPUSYNTH_TEST_SEED:-$(node -e 'console.log(1 + Math.floor(Math.random() * 2147483646))')}"; \
    echo "test order: shuffled with seed $seed (rerun this order: just race $seed)"; \
    vitest run --sequence.seed="$seed" --reporter=default --reporter=json --outputFile=.vitest-report.json

# Where the suite's CPU goes: each test file's CPU, its children's and its wall time, and how many
# cores the files kept busy over the run (vitest.file-cost.ts, scripts/test-cost.mjs), with this
# machine's speed before and after it (scripts/reference-speed.mjs).
test-cost: build
    rm -f .test-cost.tsv
    node scripts/reference-speed.mjs > .test-cost.speed
    GPUSYNTH_TEST_COST="$PWD/.test-cost.tsv" vitest run
    node scripts/reference-speed.mjs >> .test-cost.speed
    node scripts/test-cost.mjs .test-cost.tsv

# Replays the order a seed gives (the seed `just test` printed); without one, a new random order.
race seed="": build
    GPUSYNTH_TEST_SEED="{{seed}}" just test

# Simulation and emission speed benchmarks, one hyperscale shard's cost, a live platform run's
# CPU and memory measured from outside the process, and what its interval costs after sleeping
# through the interval before; write bench/results/.
bench: build
    node --expose-gc bench/sim-speed.mjs
    node --expose-gc --max-old-space-size=4096 bench/emit-speed.mjs
    node --expose-gc bench/logs-speed.mjs
    node --expose-gc --max-old-space-size=4096 bench/hyperscale.mjs
    node bench/live-platform.mjs
    node --expose-gc bench/burst-after-idle.mjs
    node bench/cli-startup.mjs

# Every shipped blueprint's rates against the real-world bands it declares (the tests check lab).
calibrate: build
    status=0; for bp in blueprints/lab.yaml blueprints/enterprise.yaml blueprints/platform.yaml; do node packages/cli/bin/gpusynth.js calibrate "$bp" || status=1; echo; done; exit $status

# The pipeline lab without Docker: gpusynth → the collector (otel-collector.yaml) → Prometheus 3
# and VictoriaLogs, local processes, until Ctrl-C (the tools: bash scripts/build-tools.sh).
lab blueprint="blueprints/lab.yaml" speed="60": build
    node scripts/lab.mjs "{{blueprint}}" --speed "{{speed}}"

# The same lab for two scenarios at high speed: the failed-job and slow-job journeys answer from
# Prometheus and VictoriaLogs, and leakcheck finds no name in clear (about 40 s).
lab-check: build
    node scripts/lab.mjs --check

# The compose lab end to end; needs a Docker engine: without one it says so and exits 0 (CI has none).
compose-lab-check: build
    if command -v docker >/dev/null && docker info >/dev/null 2>&1; then bash scripts/compose-lab-check.sh; else echo "compose-lab-check: skipped, it needs a Docker engine (none here)"; fi

# The parts of the suite by what they check, each runnable alone (`just test` runs them all).
# Node and the tools the suite uses: the Node version the engines field asks for, Prometheus and Chromium.
env-check:
    node -e 'const [a,b]=process.versions.node.split(".").map(Number); if (a<20||(a===20&&b<19)) { console.error("env-check: Node.js >= 20.19 needed, found "+process.version); process.exit(1) } console.log("env-check: Node.js "+process.version)'
    command -v prometheus >/dev/null && echo "env-check: $(prometheus --version 2>&1 | head -1)" || echo "env-check: no prometheus (the PromQL tests skip; .ci/run installs it)"
    command -v chromium >/dev/null && echo "env-check: $(chromium --version 2>/dev/null)" || echo "env-check: no chromium (the report's browser test skips; .ci/run installs it)"
    test -x .cache/victoria-metrics/usr/bin/victoria-metrics && echo "env-check: VictoriaMetrics in .cache/" || echo "env-check: no VictoriaMetrics (its OTLP test skips; bash scripts/fetch-trixie.sh)"
    for tool in otelcol/otelcol-gpusynth prometheus3/prometheus victorialogs/victoria-logs helm/helm; do test -x ".cache/$tool" && echo "env-check: .cache/$tool ($(cat ".cache/$(dirname $tool)/.stamp" | cut -d' ' -f1))" || echo "env-check: no .cache/$tool (its tests skip; bash scripts/build-tools.sh $(dirname $tool))"; done

# Documentation that states facts the code must keep: README, docs/ queries and API routes.
docs-check: build
    vitest run packages/cli/test/docs.test.ts packages/emit/test/control-plane-docs.test.ts

# No user names, machine paths, secrets or paths outside the repository in committed files.
hygiene:
    vitest run packages/cli/test/hygiene.test.ts

# The HTML report in headless Chromium.
ui-check: build
    vitest run packages/cli/test/report.test.ts

# Screenshots of each scenario's report under docs/report/ (after a change to the report).
report-screenshots: build
    node scripts/report-screenshots.mjs

# compose/: the collector, Prometheus, Loki and Grafana wiring, checked without Docker.
compose-check: build
    vitest run packages/cli/test/compose.test.ts packages/cli/test/collector-config.test.ts

# otel-collector.yaml in the real collector, and its prometheus receiver scraping gpusynth beside
# the push (the collector, Prometheus 3 and VictoriaLogs from `bash scripts/build-tools.sh`).
collector-check: build
    vitest run packages/cli/test/otel-collector.test.ts packages/cli/test/collector-scrape.test.ts packages/cli/test/pod-logs-collector.test.ts

# deploy/kubernetes rendered by kustomize and validated against the Kubernetes API schemas.
deploy-check:
    vitest run packages/cli/test/deploy.test.ts

# deploy/helm/gpusynth: helm lint, helm template (default and hyperscale values) validated against
# the Kubernetes API schemas and equal to the kustomize render (Helm v4: bash scripts/build-tools.sh helm).
helm-test:
    vitest run packages/cli/test/helm.test.ts

# What a blueprint emits: every metric family with its labels and series, and the log fields
# (`just signal-fidelity` compares all shipped blueprints' with signals/).
dump blueprint="blueprints/lab.yaml": build
    node packages/cli/bin/gpusynth.js dump --duration 1d "{{blueprint}}"
