import { realpathSync } from "node:fs";
import { homedir } from "node:os";

/** What the `bee` commands read and write, passed in so tests can run them in-process. */
export interface BeeContext {
  env: Readonly<Record<string, string | undefined>>;
  homeDir: string;
  cwd: string;
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  /** How Claude Code should start this `bee`: node and the bundle, for `bee setup claude`. */
  launcher: () => { command: string; args: string[] };
}

export function systemContext(): BeeContext {
  return {
    env: process.env,
    homeDir: homedir(),
    cwd: process.cwd(),
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
    launcher: () => ({ command: process.execPath, args: [realpathSync(process.argv[1] ?? "")] }),
  };
}
