/**
 * Samples by family name, indexed once per thing that holds them (a frame, a scrape's targets, one
 * target's samples): a check that reads several families of each, often, scans each once.
 */
import { type Sample, type SeriesColumns, seriesOf, type TargetSamples, targetsKept } from "@gpusynth/constructs";

/** Where a family's series are: samples already made, or places in a target's columns. */
interface FamilyPlaces {
  samples: Sample[];
  columns: SeriesColumns[];
  at: number[];
}

/**
 * A lookup of `owner`'s samples of one family, the index made the first time `owner` is asked
 * about. `heldBy` gives the owner's series as they are held: lists of samples, or a target's
 * columns (seriesOf), whose samples are made only for the families asked about. A frame's hundred
 * thousand samples were made, for a few families read (agreement.test: a fifth of its CPU). A
 * family's samples are made when it is first asked for: ask within the frame the columns are of,
 * as their next collect writes over them (TargetSeries).
 */
export function familyIndex<Owner extends object>(
  heldBy: (owner: Owner) => Iterable<readonly Sample[] | SeriesColumns>,
): (owner: Owner, family: string) => readonly Sample[] {
  const indexes = new WeakMap<Owner, Map<string, FamilyPlaces>>();
  return (owner, family) => {
    let index = indexes.get(owner);
    if (index === undefined) {
      index = new Map();
      const placesOf = (name: string, into: Map<string, FamilyPlaces>): FamilyPlaces => {
        let places = into.get(name);
        if (places === undefined) {
          places = { samples: [], columns: [], at: [] };
          into.set(name, places);
        }
        return places;
      };
      for (const series of heldBy(owner)) {
        if (Array.isArray(series)) for (const s of series as readonly Sample[]) placesOf(s.family.name, index).samples.push(s);
        else {
          const columns = series as SeriesColumns;
          for (let at = 0; at < columns.count; at++) {
            const places = placesOf((columns.families[at] as Sample["family"]).name, index);
            places.columns.push(columns);
            places.at.push(at);
          }
        }
      }
      indexes.set(owner, index);
    }
    const places = index.get(family);
    if (places === undefined) return [];
    // A family's samples made from its places once, the first time it is asked for.
    for (let i = 0; i < places.at.length; i++) places.samples.push((places.columns[i] as SeriesColumns).sample(places.at[i] as number));
    places.columns.length = 0;
    places.at.length = 0;
    return places.samples;
  };
}

/** Each target's series as columns, for familyIndex. */
export const targetsSeries = (targets: readonly TargetSamples[]): SeriesColumns[] => targets.map(seriesOf);

/**
 * Every sample of the targets, in order, as they are now: copies, which a check may keep past the
 * next frame, when the run sets its samples' values again. A listed target's samples are made
 * when read, so they are the copies (targetsKept). A loop, not `targets.flatMap((t) => t.samples)`:
 * Node 20's flatMap costs about 0.2 µs an element, a frame's hundred thousand samples 20 ms.
 */
export function allSamples(targets: readonly TargetSamples[]): Sample[] {
  const samples: Sample[] = [];
  for (const target of targetsKept(targets)) for (const sample of target.samples) samples.push(sample);
  return samples;
}
