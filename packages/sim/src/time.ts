/**
 * The two clocks of a run, as distinct types so that one is never passed where the other belongs:
 * SimulatedMs counts from the blueprint's time.start (the simulation's clock, what a run advances
 * by); UnixMs counts from the Unix epoch (what is stamped on emitted data: the blueprint's
 * calendar offline, the consumers' wall clock live). Both are plain numbers at run time.
 */
declare const simulated: unique symbol;
declare const unix: unique symbol;

/** Milliseconds since the blueprint's time.start. */
export type SimulatedMs = number & { readonly [simulated]: true };
/** Milliseconds since the Unix epoch. */
export type UnixMs = number & { readonly [unix]: true };

/** Names a number of milliseconds since time.start as the simulated instant it is. */
export function simulatedMs(ms: number): SimulatedMs {
  return ms as SimulatedMs;
}

/** Names a number of milliseconds since the Unix epoch as the stamped instant it is. */
export function unixMs(ms: number): UnixMs {
  return ms as UnixMs;
}
