// This machine's speed now, for `just test-cost`: a fixed CPU-bound workload (two simulated days of
// the simulation's stress fixture, seed 11, on one thread) timed three times, its median in seconds
// on stdout. The suite's CPU follows this machine's speed, which drifts by a quarter and more within
// an hour here (the same unchanged test files took 35-40 % more CPU, 2026-12-08): two suites are
// comparable only at the same reference speed, and `just test-cost` prints it before and after.
import { loadBlueprint } from "../packages/blueprint/dist/index.js";
import { Simulation } from "../packages/sim/dist/index.js";

const { blueprint } = loadBlueprint(new URL("../packages/sim/test/fixtures/stress.yaml", import.meta.url).pathname);
const TWO_DAYS = 2 * 86_400_000;
const once = () => {
  const started = process.hrtime.bigint();
  new Simulation(blueprint, { seed: 11 }).runUntil(TWO_DAYS);
  return Number(process.hrtime.bigint() - started) / 1e9;
};
once(); // compiled first
const times = [once(), once(), once()].sort((a, b) => a - b);
console.log((times[1] ?? 0).toFixed(3));
