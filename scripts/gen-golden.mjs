// Writes packages/sim/test/golden/event-logs.json: the SHA-256 of the event log of a 3-day run of
// each determinism subject at each seed. The determinism test runs each once and compares with
// this file, so a change in what the simulation does shows up as a failing test until it is
// regenerated (`just gen`) and committed on purpose.
import { createHash } from "node:crypto";
import { writeFileSync } from "node:fs";
import { loadBlueprint } from "../packages/blueprint/dist/index.js";
import { Simulation } from "../packages/sim/dist/index.js";

const DAY = 86_400_000;
/** Subjects and seeds; the determinism test reads the same list from the file. */
const SUBJECTS = { "blueprints/lab.yaml": ["default", "42", "43"], "packages/sim/test/fixtures/stress.yaml": ["default", "42", "43"] };

function eventLogHash(file, seed) {
  const { blueprint } = loadBlueprint(new URL(`../${file}`, import.meta.url).pathname);
  const simulation = new Simulation(blueprint, seed === "default" ? {} : { seed: Number(seed) });
  const hash = createHash("sha256");
  simulation.onEvent((event) => hash.update(`${JSON.stringify(event)}\n`));
  simulation.runUntil(3 * DAY);
  return hash.digest("hex");
}

const golden = {};
for (const [file, seeds] of Object.entries(SUBJECTS)) {
  golden[file] = {};
  for (const seed of seeds) golden[file][seed] = eventLogHash(file, seed);
}
writeFileSync(new URL("../packages/sim/test/golden/event-logs.json", import.meta.url), `${JSON.stringify(golden, null, 2)}\n`);
console.log("wrote packages/sim/test/golden/event-logs.json");
