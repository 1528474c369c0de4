/** An Output that keeps what a command writes, for tests that run commands in-process. */
import type { Output } from "../src/output.js";

export function captureOutput(): { output: Output; text: { out: string; err: string } } {
  const text = { out: "", err: "" };
  const output: Output = {
    out: (s) => {
      text.out += s;
    },
    err: (s) => {
      text.err += s;
    },
    interactive: false,
  };
  return { output, text };
}
