/**
 * Fair share of GPUs per queue, after KAI-Scheduler's proportion plugin
 * (NVIDIA/KAI-Scheduler @72de64fc8eca, pkg/scheduler/plugins/proportion/resource_division/
 * resource_division.go):
 * 1. every queue gets min(deserved, limit, requested);
 * 2. what is left is divided among queues that still want more, in proportion to their
 *    over-quota weights, in rounds: a queue wanting less than its slice gets what it wants,
 *    the others get the whole part of their slice, until no queue was satisfied in a round;
 * 3. the remaining whole GPUs go one at a time to the largest fractional remainders (ties to
 *    the older queue).
 * Simplified: KAI also groups queues by queue priority and adjusts weights by historical usage
 * (kValue); gpusynth's queues share one priority and it keeps no usage history, which is what
 * KAI does without a usage database.
 */

export interface ShareClaim {
  readonly deserved: number;
  /** -1: no limit. */
  readonly limit: number;
  readonly overQuotaWeight: number;
  readonly requested: number;
}

/**
 * Working memory of every division, grown to the most queues divided at once: a scheduling cycle
 * divides the pools whose requests moved, thousands of times a simulated day, and arrays of its
 * own for each division were a tenth of what a month's simulation allocated.
 */
let scratch = { caps: new Float64Array(64), remainders: new Float64Array(64), unsatisfied: new Uint8Array(64) };

function scratchFor(n: number): typeof scratch {
  if (scratch.caps.length < n) {
    const size = Math.max(n, 2 * scratch.caps.length);
    scratch = { caps: new Float64Array(size), remainders: new Float64Array(size), unsatisfied: new Uint8Array(size) };
  }
  return scratch;
}

export function divideFairShare(capacity: number, claims: readonly ShareClaim[]): number[] {
  const n = claims.length;
  const { caps, remainders, unsatisfied } = scratchFor(n);
  // What each queue can use (its request, within its limit), and its deserved part of that.
  const shares = new Array<number>(n);
  let deservedTotal = 0;
  for (let i = 0; i < n; i++) {
    const claim = claims[i] as ShareClaim;
    const cap = claim.limit >= 0 ? Math.min(claim.limit, claim.requested) : claim.requested;
    const share = Math.min(claim.deserved, cap);
    caps[i] = cap;
    shares[i] = share;
    deservedTotal += share;
  }
  let left = capacity - deservedTotal;
  if (left <= 0) return shares;

  // The queues that still want more, by a mark each (visited in declaration order, as KAI's
  // rounds visit them), and each one's fractional remainder from the last round.
  remainders.fill(0, 0, n);
  unsatisfied.fill(0, 0, n);
  let wanting = 0;
  for (let i = 0; i < n; i++) {
    if ((claims[i] as ShareClaim).overQuotaWeight > 0 && (shares[i] as number) < (caps[i] as number)) {
      unsatisfied[i] = 1;
      wanting++;
    }
  }
  while (left > 0 && wanting > 0) {
    let totalWeight = 0;
    for (let i = 0; i < n; i++) if (unsatisfied[i] === 1) totalWeight += (claims[i] as ShareClaim).overQuotaWeight;
    let given = 0;
    let anySatisfied = false;
    for (let i = 0; i < n; i++) {
      if (unsatisfied[i] === 0) continue;
      const slice = (left * (claims[i] as ShareClaim).overQuotaWeight) / totalWeight;
      const want = (caps[i] as number) - (shares[i] as number);
      if (want <= slice) {
        shares[i] = (shares[i] as number) + want;
        given += want;
        remainders[i] = 0;
        unsatisfied[i] = 0;
        wanting--;
        anySatisfied = true;
      } else {
        const whole = Math.floor(slice);
        remainders[i] = slice - whole;
        shares[i] = (shares[i] as number) + whole;
        given += whole;
      }
    }
    left -= given;
    if (!anySatisfied) break;
  }
  // Hand out the remaining whole GPUs by largest remainder; ties keep declaration (queue age) order.
  if (left <= 0 || wanting === 0) return shares;
  const byRemainder: number[] = [];
  for (let i = 0; i < n; i++) if (unsatisfied[i] === 1) byRemainder.push(i);
  sortByRemainder(byRemainder, remainders);
  for (const i of byRemainder) {
    if (left <= 0) break;
    shares[i] = (shares[i] as number) + 1;
    left--;
  }
  return shares;
}

/**
 * Queue indices by largest remainder, ties in declaration order: a total order, so any sort gives
 * the same list. An insertion sort for the few queues a division mostly leaves wanting (Array's
 * sort allocates working memory at every call); Array's sort beyond.
 */
function sortByRemainder(indices: number[], remainders: Float64Array): void {
  const before = (a: number, b: number) => (remainders[b] as number) - (remainders[a] as number) || a - b;
  if (indices.length > 16) {
    indices.sort(before);
    return;
  }
  for (let k = 1; k < indices.length; k++) {
    const i = indices[k] as number;
    let j = k - 1;
    while (j >= 0 && before(indices[j] as number, i) > 0) {
      indices[j + 1] = indices[j] as number;
      j--;
    }
    indices[j + 1] = i;
  }
}
