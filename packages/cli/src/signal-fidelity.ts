/**
 * Signal fidelity: what runs actually emitted, compared with what signals/ documents. Any
 * emitted family, label, type or HELP text that signals/ does not document is a problem; so is
 * a documented "emitted" family that no run emitted (when the runs are meant to cover every
 * family: all shipped blueprints), and any emitted PENDING family.
 */
import { LABEL_PATTERN } from "@gpusynth/constructs";
import type { Inventory } from "./inventory.js";
import type { DocumentedFamily } from "./signals-doc.js";

export function fidelityProblems(
  inventories: readonly Inventory[],
  documented: readonly DocumentedFamily[],
  /** Whether every family documented as emitted must be emitted by one of the runs. */
  coverAll = true,
): string[] {
  const problems: string[] = [];
  const byName = new Map(documented.map((d) => [d.name, d]));
  const emitted = new Set<string>();
  for (const inventory of inventories) {
    for (const source of inventory.sources) {
      for (const family of source.families) {
        emitted.add(family.name);
        const doc = byName.get(family.name);
        const where = `${inventory.blueprint}: ${family.name}`;
        if (doc === undefined) {
          problems.push(`${where}: emitted but not documented in signals/${source.area}.md`);
          continue;
        }
        if (doc.area !== source.area)
          problems.push(`${where}: emitted by the ${source.area} source but documented in signals/${doc.area}.md`);
        // One name per source: its folder, its area and its ids' prefix (docs/contributing.md).
        if (!family.id.startsWith(`${source.area}.`))
          problems.push(`${where}: id ${family.id} is not named after its source (${source.area}.<name>)`);
        if (doc.status !== "emitted") problems.push(`${where}: emitted although signals/${doc.area}.md:${doc.line} marks it ${doc.status}`);
        if (doc.id !== family.id) problems.push(`${where}: catalogue id ${family.id}, signals/${doc.area}.md:${doc.line} says ${doc.id}`);
        if (doc.type !== family.type) problems.push(`${where}: emitted as ${family.type}, documented as ${doc.type}`);
        if (doc.help !== family.help) problems.push(`${where}: HELP "${family.help}" differs from the documented "${doc.help}"`);
        for (const label of family.labels) {
          const allowed = doc.labels.includes(label) || (label.startsWith("label_") && doc.labels.includes(LABEL_PATTERN));
          if (!allowed) problems.push(`${where}: label ${label} is not documented (signals/${doc.area}.md:${doc.line})`);
        }
      }
    }
  }
  for (const inventory of inventories) {
    for (const log of inventory.logs) {
      const fields = [
        ...log.resourceKeys.map((k) => [k, "log-resource"] as const),
        ...log.attributeKeys.map((k) => [k, "log-attribute"] as const),
      ];
      for (const [key, type] of fields) {
        emitted.add(`${log.receiver}\u0000${type}\u0000${key}`);
        const doc = documented.find((d) => d.name === key && d.type === type && d.labels.includes(log.receiver));
        if (doc === undefined)
          problems.push(
            `${inventory.blueprint}: ${log.receiver} ${type === "log-resource" ? "resource" : "record"} attribute ${key} is not documented in signals/${log.area}.md`,
          );
        else if (doc.status !== "emitted")
          problems.push(
            `${inventory.blueprint}: ${log.receiver} field ${key} is emitted although signals/${doc.area}.md:${doc.line} marks it ${doc.status}`,
          );
      }
    }
  }
  for (const doc of coverAll ? documented : []) {
    const isLogField = doc.type === "log-resource" || doc.type === "log-attribute";
    const seen = isLogField
      ? doc.labels.some((receiver) => emitted.has(`${receiver}\u0000${doc.type}\u0000${doc.name}`))
      : emitted.has(doc.name);
    if (doc.status === "emitted" && !seen) {
      problems.push(`signals/${doc.area}.md:${doc.line}: ${doc.name} is documented as emitted but no run emitted it`);
    }
  }
  return problems;
}
