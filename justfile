# gpusynth tasks. `just` comes from the rust-just npm package: run `npm ci` first.
# Every recipe is also an npm script (npm run <recipe>; `just test` is `npm run test:unit`,
# `just check` is `npm test`).

set shell := ["bash", "-euo", "pipefail", "-c"]

# Everything CI checks.
check: fmt-check lint typecheck gen-check signal-fidelity test

build:
    npx tsc -b

fmt:
    npx biome format --write .

fmt-check:
    npx biome format .

lint:
    npx biome check --formatter-enabled=false .

typecheck: build
    npx tsc -p tsconfig.test.json

# Regenerate blueprints/blueprint.schema.json from the zod schema, signals/name-fidelity.md
# from the translation rules, signals/volume.md from runs of the shipped blueprints, and the
# determinism test's golden event-log hashes (the tests check that the last three still hold).
gen: build
    node scripts/gen-schema.mjs
    node packages/cli/bin/gpusynth.js fidelity > signals/name-fidelity.md
    node scripts/gen-volume.mjs
    node scripts/gen-golden.mjs

gen-check: build
    node scripts/gen-schema.mjs --check

# What shipped blueprints actually emit, compared with signals/ and cantfind.md.
# A larger young generation: a day of scheduler log lines is millions of short-lived strings.
signal-fidelity: build
    node --max-semi-space-size=64 packages/cli/bin/gpusynth.js check-signals

# Tests must not depend on each other, so the suite runs once with each file's tests in a random
# order, shuffled by a printed seed (`just race <seed>` replays that order).
test: build
    seed="${GPUSYNTH_TEST_SEED:-$(node -e 'console.log(1 + Math.floor(Math.random() * 2147483646))')}"; \
    echo "test order: shuffled with seed $seed (rerun this order: just race $seed)"; \
    npx vitest run --sequence.seed="$seed" --reporter=default --reporter=json --outputFile=.vitest-report.json

# Replays the order a seed gives (the seed `just test` printed); without one, a new random order.
race seed="": build
    GPUSYNTH_TEST_SEED="{{seed}}" just test

# Simulation and emission speed benchmarks; write bench/results/.
bench: build
    node --expose-gc bench/sim-speed.mjs
    node --expose-gc --max-old-space-size=4096 bench/emit-speed.mjs

# Every shipped blueprint's rates against the real-world bands it declares (the tests check lab).
calibrate: build
    status=0; for bp in blueprints/lab.yaml blueprints/enterprise.yaml blueprints/platform.yaml; do node packages/cli/bin/gpusynth.js calibrate "$bp" || status=1; echo; done; exit $status

# The compose lab end to end; needs a Docker engine (not run by CI: this machine has none).
lab-check: build
    bash scripts/lab-check.sh
