/** What the `floot` commands read and write, passed in so tests can run them in-process. */
export interface FlootContext {
  env: Readonly<Record<string, string | undefined>>;
  cwd: string;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream & { isTTY?: boolean };
  stdin: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
  /** Where the daemon hears SIGINT and SIGTERM. */
  signals: Pick<NodeJS.Process, "on" | "off">;
  /** The web UI's built files, when installed beside the bundle. */
  uiDir?: string;
}
