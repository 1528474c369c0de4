/** Command-line mistakes: reported as a message and exit code 2, never as a stack trace. */
export class UsageError extends Error {
  override readonly name = "UsageError";
}

export const EXIT_OK = 0;
export const EXIT_FAILURE = 1;
export const EXIT_USAGE = 2;
