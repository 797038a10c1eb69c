export class ClientError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    readonly code?: string,
  ) {
    super(message);
  }
}

/** What a command that found no daemon running tells its user to do. */
export const startDaemonHint = "start one with: floot daemon";
