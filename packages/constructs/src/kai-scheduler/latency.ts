/**
 * How long a KAI scheduling cycle takes, modelled (no published figures): a few milliseconds
 * plus a little per pending workload and per ten running ones, jittered per second. The
 * latency gauges report it, and the log's cycles drift by it: KAI's loop waits the period
 * after a cycle ends (wait.Until, sliding), so each cycle starts that much later in its second.
 */
import { unitHash } from "../noise.js";

export function cycleWork(pending: number, running: number): number {
  return pending + running / 10;
}

/** The jitter of the simulated second that holds `simulatedMs`, in [0, 1). */
export function cycleJitter(simulatedMs: number): number {
  return unitHash("kai-cycle", Math.floor(simulatedMs / 1000));
}

/** End-to-end cycle time in milliseconds (kai_e2e_scheduling_latency_milliseconds). */
export function cycleLatencyMs(pending: number, running: number, simulatedMs: number): number {
  return Math.round(4 + 0.2 * cycleWork(pending, running) + 6 * cycleJitter(simulatedMs));
}

/**
 * One action's time in a cycle (kai_action_scheduling_latency_milliseconds, whole milliseconds as
 * KAI's UpdateActionDuration sets them): its share of the work, varying ±50 % from second to
 * second with a jitter of its own, plus up to a millisecond of fixed cost.
 */
export function actionLatencyMs(costPerWork: number, work: number, action: string, simulatedMs: number): number {
  const jitter = unitHash(`kai-cycle/${action}`, Math.floor(simulatedMs / 1000));
  return Math.round(costPerWork * work * (0.5 + jitter) + jitter);
}
