/** "Did you mean": the closest known word to a mistyped one, when it is close enough to be meant. */

/** Edit distance (insertions, deletions, substitutions); words here are short. */
function distance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1);
      row.push(Math.min((previous[j] as number) + 1, (row[j - 1] as number) + 1, substitution));
    }
    previous = row;
  }
  return previous[b.length] as number;
}

const bare = (word: string) => word.replace(/^-+/, "");

/**
 * `; did you mean "<candidate>"?` for the closest candidate, else "". Close means at most one
 * edit per three letters typed (leading dashes aside), and never more than two: "--ofline" is
 * "--offline", "--bogus" is nothing in particular.
 */
export function didYouMean(typed: string, candidates: Iterable<string>): string {
  let best: { candidate: string; d: number } | undefined;
  for (const candidate of candidates) {
    const d = distance(bare(typed), bare(candidate));
    if (best === undefined || d < best.d) best = { candidate, d };
  }
  const allowed = Math.min(2, Math.max(1, Math.floor(bare(typed).length / 3)));
  return best !== undefined && best.d <= allowed ? `; did you mean "${best.candidate}"?` : "";
}
