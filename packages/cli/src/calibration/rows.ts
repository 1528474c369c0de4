/** Calibration rows: each measured rate next to the blueprint's tolerance band, with a verdict. */
import { type Blueprint, CALIBRATION_METRICS, type CalibrationMetric } from "@gpusynth/blueprint";
import type { Measurement } from "./measure.js";

export type Verdict = "pass" | "fail" | "no target" | "not measured";

export interface CalibrationRow {
  readonly metric: CalibrationMetric;
  readonly description: string;
  readonly measured: number | null;
  readonly min: number | null;
  readonly max: number | null;
  readonly verdict: Verdict;
}

export function calibrationRows(blueprint: Blueprint, measured: Measurement): CalibrationRow[] {
  return (Object.keys(CALIBRATION_METRICS) as CalibrationMetric[]).map((metric) => {
    const value = measured[metric];
    const band = blueprint.calibration.targets[metric];
    const min = band?.min ?? null;
    const max = band?.max ?? null;
    let verdict: Verdict;
    if (band === undefined) verdict = "no target";
    else if (value === undefined) verdict = "not measured";
    else verdict = (min === null || value >= min) && (max === null || value <= max) ? "pass" : "fail";
    return { metric, description: CALIBRATION_METRICS[metric], measured: value ?? null, min, max, verdict };
  });
}

/** A calibration passes when no row with a target fails or goes unmeasured. */
export const passed = (rows: readonly CalibrationRow[]) => rows.every((r) => r.verdict === "pass" || r.verdict === "no target");

const number = (value: number | null): string => {
  if (value === null) return "—";
  if (Number.isInteger(value)) return String(value);
  return Math.abs(value) >= 100 ? value.toFixed(0) : Math.abs(value) >= 1 ? value.toFixed(2) : value.toPrecision(2);
};

const bandText = (row: CalibrationRow) =>
  row.min === null && row.max === null
    ? "—"
    : row.max === null
      ? `≥ ${number(row.min)}`
      : row.min === null
        ? `≤ ${number(row.max)}`
        : `${number(row.min)} … ${number(row.max)}`;

export function calibrationTable(rows: readonly CalibrationRow[]): string {
  const header = ["metric", "target", "measured", "verdict"];
  const body = rows.map((r) => [r.description, bandText(r), number(r.measured), r.verdict === "fail" ? "FAIL" : r.verdict]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((row) => (row[i] as string).length)));
  const line = (cells: readonly string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i] as number) : c.padStart(widths[i] as number))).join("  ");
  return [line(header), ...body.map(line)].join("\n");
}
