/**
 * KAI-Scheduler's value formats (resource_info HumanizeResource through go-humanize's
 * FtoaWithDigits(v, 3)): three decimals cut rather than rounded, trailing zeros dropped, memory
 * in decimal GB — so a binary quantity prints with the digits an SRE sees in a real log.
 */
import { describe, expect, it } from "vitest";
import { humanize, queueResourceText, requirementsText, resourceText } from "../src/kai-scheduler/values.js";

describe("KAI's resource values", () => {
  it.each([
    [(2 * 2 ** 30) / 1e9, "2.147"], // 2Gi in GB: 2.147483648, cut, not rounded to 2.148
    [(4 * 2 ** 30) / 1e9, "4.294"],
    [(8 * 2 ** 30) / 1e9, "8.589"], // 8.589934592
    [0.5, "0.5"],
    [8, "8"],
    [0, "0"],
    [-1, "Unlimited"],
  ])("prints %d as %s", (value, text) => {
    expect(humanize(value)).toBe(text);
  });

  it("prints a job's resources, a task's requirements and a queue's share as their String() methods do", () => {
    expect(resourceText(2000, 4 * 2 ** 30, 2)).toBe("CPU: 2 (cores), memory: 4.294 (GB), Gpus: 2");
    expect(requirementsText(1, 1000, 2 * 2 ** 30)).toBe("GPU: 1, CPU: 1 (cores), memory: 2.147 (GB)");
    expect(queueResourceText(2.5, -1, -1)).toBe("GPU: 2, CPU: Unlimited (cores), memory: Unlimited (GB)");
  });
});
