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

export function divideFairShare(capacity: number, claims: readonly ShareClaim[]): number[] {
  const cap = (claim: ShareClaim) => (claim.limit >= 0 ? Math.min(claim.limit, claim.requested) : claim.requested);
  const shares = claims.map((claim) => Math.min(claim.deserved, cap(claim)));
  let left = capacity - shares.reduce((sum, share) => sum + share, 0);
  if (left <= 0) return shares;

  const remainders = new Array<number>(claims.length).fill(0);
  const unsatisfied = new Set<number>();
  claims.forEach((claim, i) => {
    if (claim.overQuotaWeight > 0 && (shares[i] as number) < cap(claim)) unsatisfied.add(i);
  });
  while (left > 0 && unsatisfied.size > 0) {
    let totalWeight = 0;
    for (const i of unsatisfied) totalWeight += (claims[i] as ShareClaim).overQuotaWeight;
    let given = 0;
    let anySatisfied = false;
    for (const i of [...unsatisfied]) {
      const claim = claims[i] as ShareClaim;
      const slice = (left * claim.overQuotaWeight) / totalWeight;
      const want = cap(claim) - (shares[i] as number);
      if (want <= slice) {
        shares[i] = (shares[i] as number) + want;
        given += want;
        remainders[i] = 0;
        unsatisfied.delete(i);
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
  // Hand out the remaining whole GPUs by largest remainder; the sort is stable, so ties keep
  // declaration (queue age) order.
  const byRemainder = [...unsatisfied].sort((a, b) => (remainders[b] as number) - (remainders[a] as number) || a - b);
  for (const i of byRemainder) {
    if (left <= 0) break;
    shares[i] = (shares[i] as number) + 1;
    left--;
  }
  return shares;
}
