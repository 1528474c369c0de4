// Writes packages/sim/test/golden/event-logs.json: the SHA-256 of the event log of a run of each
// determinism subject at each seed (lab: three days, a week's start; the stress fixture: one day,
// which already holds every kind of event — its later days only grow the backlog). The determinism test runs each once and compares with
// this file, so a change in what the simulation does shows up as a failing test until it is
// regenerated (`just gen`) and committed on purpose.
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { loadBlueprint } from "../packages/blueprint/dist/index.js";
import { Simulation } from "../packages/sim/dist/index.js";

const DAY = 86_400_000;
/** Subjects and seeds; the determinism test reads the same list from the file. */
const SUBJECTS = {
  "blueprints/lab.yaml": { days: 3, seeds: ["default", "42", "43"] },
  "packages/sim/test/fixtures/stress.yaml": { days: 1, seeds: ["default", "42", "43"] },
};

function eventLogHash(file, days, seed) {
  const { blueprint } = loadBlueprint(new URL(`../${file}`, import.meta.url).pathname);
  const simulation = new Simulation(blueprint, seed === "default" ? {} : { seed: Number(seed) });
  const hash = createHash("sha256");
  simulation.onEvent((event) => hash.update(`${JSON.stringify(event)}\n`));
  simulation.runUntil(days * DAY);
  return hash.digest("hex");
}

const golden = {};
for (const [file, { days, seeds }] of Object.entries(SUBJECTS)) {
  golden[file] = { days, seeds: {} };
  for (const seed of seeds) golden[file].seeds[seed] = eventLogHash(file, days, seed);
}
writeFileSync(new URL("../packages/sim/test/golden/event-logs.json", import.meta.url), `${JSON.stringify(golden, null, 2)}\n`);
console.log("wrote packages/sim/test/golden/event-logs.json");
