/** Where the CLI writes; injectable so tests capture output without spawning processes. */
export interface Output {
  out(text: string): void;
  err(text: string): void;
  /** True when stderr is a terminal: progress lines are drawn only then. */
  readonly interactive: boolean;
}

export const processOutput: Output = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  interactive: process.stderr.isTTY === true,
};
