/** An error as one line of text: its message, or the thrown value itself when it is not an Error. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The thrown value as an Error, so it can be rethrown or rejected with a stack. */
export function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}
