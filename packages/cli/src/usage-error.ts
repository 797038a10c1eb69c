/** A refusal of what the user typed; `argument` names it (`--port`, `<id>`, `BEE_LOG_LEVEL`). Exit 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
  /** The command line it refers to (`floot session create`), once known. */
  command: string | undefined;
  constructor(
    readonly argument: string,
    readonly problem: string,
  ) {
    super(`${argument}: ${problem}`);
  }
}
