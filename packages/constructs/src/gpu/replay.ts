/**
 * A captured GPU's load replayed through the model: the phases a capture ran (idle with a CUDA
 * context, matrix products, copies, one second on and one off) become one run on one board with
 * neutral traits, read at the capture's own instants, so each reading stands beside what NVML
 * reported then. The loads are the capture's GPM means per phase (SM, tensor and DRAM activity);
 * in the bursty phase, when each burst began and ended is read off the die temperature, which
 * answers within a tenth of a second (above 48 °C: running). Used by the H200 replay test and the
 * GPU-physics page (scripts/gen-gpu-physics.mjs).
 */
import type { GpuModel } from "@gpusynth/blueprint";
import { ImagePulls } from "../kubelet/image-pulls.js";
import { GpuActivityModel, type GpuReading } from "./activity.js";
import { type Load, NO_CONTEXT, type Rhythm } from "./load.js";
import { GpuTimelines } from "./timeline.js";

/** One phase of a capture, in seconds from its start (phases.json). */
export interface CapturePhase {
  readonly phase: string;
  readonly start: number;
  readonly end: number;
}

/** A CSV row as text by column name (trace.csv: `t`, `phase`, `temp_gpu`, …; gpm.csv: `sm_util`, …). */
export type CaptureRow = Readonly<Record<string, string>>;

/** The rows of one of a capture's CSV files (header line first), as text by column name. */
export function captureRows(csv: string): CaptureRow[] {
  const [header, ...rows] = csv.trim().split("\n");
  const names = (header ?? "").split(",");
  return rows.map((row) => Object.fromEntries(row.split(",").map((v, i) => [names[i] as string, v])));
}

export interface Capture {
  readonly phases: readonly CapturePhase[];
  readonly trace: readonly CaptureRow[];
  readonly gpm: readonly CaptureRow[];
}

/** The die temperature (°C) above which the bursty phase's program is taken to be running. */
const RUNNING_DIE_C = 48;
const UUID = "GPU-replay";

/** The model's reading at each of the trace's instants. */
export function replayCapture(capture: Capture, model: GpuModel): GpuReading[] {
  const mean = (rows: readonly CaptureRow[], column: string) => rows.reduce((s, r) => s + Number(r[column]), 0) / rows.length / 100;
  const loadOf = (phase: string): Load => {
    const rows = capture.gpm.filter((r) => r.phase === phase);
    return {
      util: 100,
      jitter: 0,
      engineShare: mean(rows, "sm_util"),
      tensorShare: mean(rows, "any_tensor"),
      dram: mean(rows, "dram_bw"),
      context: true,
    };
  };
  const held: Load = { ...NO_CONTEXT, context: true };
  const pieces: { from: number; load: Load }[] = [];
  for (const p of capture.phases) {
    const from = p.start * 1000;
    if (p.phase === "matmul" || p.phase === "copy") pieces.push({ from, load: loadOf(p.phase) });
    else if (p.phase === "duty_1s") {
      pieces.push({ from, load: held });
      let running = false;
      capture.trace.forEach((r, i) => {
        if (r.phase !== p.phase || Number(r.temp_gpu) >= RUNNING_DIE_C === running) return;
        running = !running;
        const at = ((Number(r.t) + Number(capture.trace[i - 1]?.t ?? r.t)) / 2) * 1000;
        pieces.push({ from: at, load: running ? loadOf("matmul") : held });
      });
    } else pieces.push({ from, load: held });
  }
  const rhythm: Rhythm = {
    at: (t) => [...pieces].reverse().find((p) => p.from <= t)?.load ?? held,
    nextChange: (t) => pieces.find((p) => p.from > t)?.from ?? Number.POSITIVE_INFINITY,
    lastBusyAt: (t) => t,
    framebufferShare: () => 0,
  };
  const timelines = new GpuTimelines(new ImagePulls(new Map()));
  const first = (capture.phases[0]?.start ?? 0) * 1000;
  timelines.add(UUID, {
    of: { workloadUid: "replay", type: "training", rank: 0, from: first },
    podUid: "replay",
    rhythm,
    intensity: 1,
    to: Number.POSITIVE_INFINITY,
  });
  const activity = new GpuActivityModel(timelines, () => ({ idlePowerFactor: 1, efficiency: 1, tempOffsetC: 0 }));
  return capture.trace.map((r) => activity.read({ uuid: UUID, initialisedAt: 0 }, model, Number(r.t) * 1000));
}
