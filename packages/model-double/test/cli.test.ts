import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { once } from "node:events";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../src/run-cli.js";
import { anthropicRequest, parseSse, postJson } from "./helpers.js";

const packageDir = dirname(dirname(fileURLToPath(import.meta.url)));
const validScript = {
  steps: [{ repeat: true, response: { events: [{ type: "text", text: "from the cli", chunks: 1 }] } }],
};
const invalidScript = { steps: [{ response: { events: [{ type: "text", text: "x", chunks: 0 }] } }] };

let directory: string;
let validPath: string;
let invalidPath: string;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), "model-double-cli-"));
  validPath = join(directory, "valid.json");
  invalidPath = join(directory, "invalid.json");
  await writeFile(validPath, JSON.stringify(validScript));
  await writeFile(invalidPath, JSON.stringify(invalidScript));
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

function captureIo() {
  const stdout: string[] = [];
  const stderr: string[] = [];
  let shutdown!: () => void;
  const shutdownRequested = new Promise<void>((resolve) => {
    shutdown = resolve;
  });
  return {
    stdout,
    stderr,
    shutdown,
    io: {
      stdout: (line: string) => stdout.push(line),
      stderr: (line: string) => stderr.push(line),
      waitForShutdown: () => shutdownRequested,
    },
  };
}

describe("runCli", () => {
  it.each([
    [[], "missing command"],
    [["serve"], "--script is required"],
    [["serve", "--script", "x.json", "--port", "http"], "--port must be an integer from 0 to 65535"],
    [["serve", "--script", "x.json", "--verbose"], "Unknown option '--verbose'"],
    [["start", "--script", "x.json"], "unknown command start"],
  ])("exits 2 on bad arguments %j", async (argv, message) => {
    const { io, stderr, stdout } = captureIo();
    expect(await runCli(argv, io)).toBe(2);
    expect(stderr.join("\n")).toContain(message);
    expect(stderr.join("\n")).toContain("usage: model-double serve --script");
    expect(stdout).toEqual([]);
  });

  it("exits 2 naming the field when the script is invalid", async () => {
    const { io, stderr } = captureIo();
    expect(await runCli(["serve", "--script", invalidPath], io)).toBe(2);
    expect(stderr.join("\n")).toContain(
      `script ${invalidPath}: invalid script: steps[0].response.events[0].chunks`,
    );
  });

  it("prints the URL, serves the script, logs requests without headers, and stops on shutdown", async () => {
    const { io, stdout, stderr, shutdown } = captureIo();
    const exit = runCli(["serve", "--script", validPath, "--port", "0"], io);
    while (stdout.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    const [url] = stdout;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const response = await postJson(`${url}/v1/messages`, anthropicRequest("hi"), {
      "x-api-key": "sk-secret",
    });
    expect(
      parseSse(await response.text()).some((event) => JSON.stringify(event.data).includes("from the cli")),
    ).toBe(true);
    expect(JSON.parse(stderr[0]!)).toMatchObject({ msg: "request", index: 0, api: "anthropic", status: 200 });
    expect(stderr.join("\n")).not.toContain("sk-secret");

    shutdown();
    expect(await exit).toBe(0);
    await expect(postJson(`${url}/v1/messages`, anthropicRequest("hi"))).rejects.toThrow();
  });
});

describe("model-double binary", () => {
  const children: ChildProcess[] = [];

  beforeAll(() => {
    const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
    execFileSync(process.execPath, [tsc, "-b", packageDir], { stdio: "pipe" });
  }, 60_000);

  afterEach(() => {
    for (const child of children.splice(0)) {
      if (child.exitCode === null && child.signalCode === null && child.pid !== undefined)
        process.kill(child.pid, "SIGKILL");
    }
  });

  function spawnCli(args: string[]): ChildProcess {
    const child = spawn(process.execPath, [join(packageDir, "dist", "cli.js"), ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.push(child);
    return child;
  }

  it("prints its URL on one stdout line and exits 0 on SIGTERM", async () => {
    const child = spawnCli(["serve", "--script", validPath]);
    const [url] = (await once(createInterface({ input: child.stdout! }), "line")) as [string];
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const response = await postJson(`${url}/v1/messages`, anthropicRequest("hi"));
    expect(response.status).toBe(200);
    await response.text();

    const exited = once(child, "exit");
    process.kill(child.pid!, "SIGTERM");
    expect(await exited).toEqual([0, null]);
  });

  it("exits 2 with the offending field on stderr for an invalid script", async () => {
    const child = spawnCli(["serve", "--script", invalidPath]);
    let stderr = "";
    child.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const [code] = await once(child, "exit");
    expect(code).toBe(2);
    expect(stderr).toContain("steps[0].response.events[0].chunks");
  });
});
