import { parseArgs } from "node:util";
import { describeError } from "@bridgeworks/runtime";
import { InvalidScriptError } from "./script.js";
import { loadScriptFile } from "./script-file.js";
import { startModelDouble } from "./server.js";

export interface CliIo {
  /** One line, without the trailing newline. */
  stdout(line: string): void;
  stderr(line: string): void;
  /** Resolves when the process should stop serving (SIGINT/SIGTERM in the real CLI). */
  waitForShutdown(): Promise<void>;
}

export const usage = "usage: model-double serve --script <file.json> [--port <0-65535>] [--host <address>]";

/** Exit codes: 0 served and stopped, 1 could not serve, 2 bad arguments or invalid script. */
export async function runCli(argv: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseCliArgs(argv);
  if (!parsed.ok) {
    io.stderr(`model-double: ${parsed.message}`);
    io.stderr(usage);
    return 2;
  }
  if (parsed.help) {
    io.stdout(usage);
    return 0;
  }

  let script: Awaited<ReturnType<typeof loadScriptFile>>;
  try {
    script = await loadScriptFile(parsed.scriptPath);
  } catch (error) {
    if (!(error instanceof InvalidScriptError)) throw error;
    io.stderr(`model-double: ${error.message}`);
    return 2;
  }

  let double: Awaited<ReturnType<typeof startModelDouble>>;
  try {
    double = await startModelDouble(script, {
      port: parsed.port,
      host: parsed.host,
      onRequest: (request) =>
        io.stderr(
          JSON.stringify({
            level: request.response.failure === undefined ? "info" : "warn",
            msg: "request",
            index: request.index,
            api: request.api,
            method: request.method,
            path: request.path,
            status: request.response.status,
            stepIndex: request.response.stepIndex,
            ...(request.response.failure === undefined ? {} : { failure: request.response.failure }),
          }),
        ),
    });
  } catch (error) {
    io.stderr(`model-double: cannot listen on ${parsed.host}:${parsed.port}: ${String(error)}`);
    return 1;
  }
  io.stdout(double.url);
  await io.waitForShutdown();
  await double.close();
  return 0;
}

type ParsedArgs =
  | { ok: true; help: true }
  | { ok: true; help: false; scriptPath: string; port: number; host: string }
  | { ok: false; message: string };

function parseCliArgs(argv: readonly string[]): ParsedArgs {
  let values: { script?: string; port?: string; host?: string; help?: boolean };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args: [...argv],
      allowPositionals: true,
      strict: true,
      options: {
        script: { type: "string" },
        port: { type: "string" },
        host: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    }));
  } catch (error) {
    return { ok: false, message: describeError(error) };
  }
  if (values.help) return { ok: true, help: true };
  const [command, ...extra] = positionals;
  if (command !== "serve") {
    return { ok: false, message: command === undefined ? "missing command" : `unknown command ${command}` };
  }
  if (extra.length > 0) return { ok: false, message: `unexpected argument ${extra[0]}` };
  if (values.script === undefined) return { ok: false, message: "--script is required" };
  const port = Number(values.port ?? "0");
  if (!Number.isInteger(port) || port < 0 || port > 65535 || values.port === "") {
    return {
      ok: false,
      message: `--port must be an integer from 0 to 65535, got ${JSON.stringify(values.port)}`,
    };
  }
  return { ok: true, help: false, scriptPath: values.script, port, host: values.host ?? "127.0.0.1" };
}
