/**
 * Which run, and how this process takes part in it: the four choices every way of emitting a run
 * takes (the CLI's live and offline commands, runLive, emitOffline, the shard workers), declared
 * once here and handed down whole.
 */
import type { LogSources, Shard } from "@gpusynth/constructs";

export interface RunSelection {
  /** Overrides the blueprint's seed. */
  readonly seed?: number;
  /** Emit only this shard's part (constructs' shard.ts; default: the whole run); a scrape server lists only its targets. */
  readonly shard?: Shard;
  /** Which log sources write (default: both). */
  readonly logSources?: LogSources;
  /** Worker threads emitting the metrics, each a shard of this process's part (workers/shard-workers.ts); 1 or absent: this thread does. */
  readonly workers?: number;
}

/** Only the choices made (an options object holds no `undefined`), from anything that carries them. */
export function runSelection({ seed, shard, logSources, workers }: RunSelection): RunSelection {
  return {
    ...(seed === undefined ? {} : { seed }),
    ...(shard === undefined ? {} : { shard }),
    ...(logSources === undefined ? {} : { logSources }),
    ...(workers === undefined ? {} : { workers }),
  };
}
