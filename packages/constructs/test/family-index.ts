/**
 * Samples by family name, indexed once per thing that holds them (a frame, a scrape's targets, one
 * target's samples): a check that reads several families of each, often, scans each once.
 */
import type { Sample } from "@gpusynth/constructs";

/** A lookup of `owner`'s samples of one family, the index made the first time `owner` is asked about. */
export function familyIndex<Owner extends object>(
  samplesOf: (owner: Owner) => Iterable<Sample>,
): (owner: Owner, family: string) => readonly Sample[] {
  const indexes = new WeakMap<Owner, Map<string, Sample[]>>();
  return (owner, family) => {
    let index = indexes.get(owner);
    if (index === undefined) {
      index = new Map();
      for (const s of samplesOf(owner)) {
        const list = index.get(s.family.name);
        if (list === undefined) index.set(s.family.name, [s]);
        else list.push(s);
      }
      indexes.set(owner, index);
    }
    return index.get(family) ?? [];
  };
}
