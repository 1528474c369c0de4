/**
 * Reads signals/<area>.md: the family tables whose first column is a backticked id. Columns:
 * id | name | type | labels | HELP | status | source. Status is "emitted", "opt-in" or
 * "PENDING" (documented but not emitted until confirmed).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface DocumentedFamily {
  readonly area: string;
  readonly id: string;
  readonly name: string;
  readonly type: string;
  readonly labels: readonly string[];
  readonly help: string;
  readonly status: string;
  /** Line in the area file, for messages. */
  readonly line: number;
}

const unquote = (cell: string) => cell.trim().replace(/^`|`$/g, "");

export function readSignals(dir: string): DocumentedFamily[] {
  const families: DocumentedFamily[] = [];
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".md"))
    .sort()) {
    const area = file.replace(/\.md$/, "");
    readFileSync(join(dir, file), "utf8")
      .split("\n")
      .forEach((text, index) => {
        if (!/^\|\s*`[a-z][a-z-]*\.[A-Za-z0-9_]+`\s*\|/.test(text)) return;
        const cells = text
          .slice(1, -1)
          .split(/(?<!\\)\|/)
          .map((c) => c.trim());
        if (cells.length < 7) return;
        const [id, name, type, labels, help, status] = cells as [string, string, string, string, string, string];
        families.push({
          area,
          id: unquote(id),
          name: unquote(name),
          type,
          labels: labels === "—" || labels === "" ? [] : labels.split(",").map(unquote),
          help: help === "—" ? "" : help.replace(/\\\|/g, "|"),
          status,
          line: index + 1,
        });
      });
  }
  return families;
}
