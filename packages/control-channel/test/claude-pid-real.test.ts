import { spawn } from "node:child_process";
import { readFile, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import ts from "typescript";
import { expect, test } from "vitest";
import { useChildren, useTempDirs } from "./helpers.js";

const tempDir = useTempDirs();
const track = useChildren();

const sourceDir = new URL("../src/", import.meta.url);

/** The real claude-pid modules as plain ESM, so a child node process can run exactly this code. */
async function transpileClaudePidModules(outDir: string): Promise<void> {
  await writeFile(join(outDir, "package.json"), JSON.stringify({ type: "module" }));
  for (const name of ["claude-pid", "process-reader"]) {
    const source = await readFile(new URL(`${name}.ts`, sourceDir), "utf8");
    const { outputText } = ts.transpileModule(source, {
      compilerOptions: {
        module: ts.ModuleKind.ESNext,
        target: ts.ScriptTarget.ES2022,
        verbatimModuleSyntax: true,
      },
    });
    await writeFile(join(outDir, `${name}.js`), outputText);
  }
}

const reportScript = `
import { findClaudePid } from "./claude-pid.js";
import { readProcessWithPs, systemProcessReader } from "./process-reader.js";
const input = { env: process.env, startPid: process.ppid };
console.log(JSON.stringify({
  role: process.argv[2],
  ps: findClaudePid({ ...input, readProcess: readProcessWithPs }) ?? null,
  system: findClaudePid({ ...input, readProcess: systemProcessReader }) ?? null,
}));
`;

// Runs as "claude": a stdio server is its direct child, a command hook runs under sh -c.
const sessionScript = `
import { spawnSync } from "node:child_process";
const report = new URL("./report.js", import.meta.url).pathname;
const bridge = spawnSync(process.execPath, [report, "bridge"], { encoding: "utf8" });
const hook = spawnSync("/bin/sh", ["-c", '"$0" "$1" hook; true', process.execPath, report], { encoding: "utf8" });
process.stdout.write(bridge.stdout + hook.stdout);
process.stderr.write(bridge.stderr + hook.stderr);
`;

test("a real process tree: the bridge and a hook under sh both find the process whose comm is claude", async () => {
  const dir = await tempDir();
  await transpileClaudePidModules(dir);
  await writeFile(join(dir, "report.js"), reportScript);
  await writeFile(join(dir, "session.js"), sessionScript);
  // comm comes from the name the executable was started under.
  const claude = join(dir, "claude");
  await symlink(process.execPath, claude);

  const env = { ...process.env };
  delete env.CLAUDE_PID;
  const session = track(spawn(claude, [join(dir, "session.js")], { env, stdio: ["ignore", "pipe", "pipe"] }));
  let stdout = "";
  let stderr = "";
  session.stdout!.on("data", (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  session.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exitCode = await new Promise<number | null>((resolve) => session.once("exit", resolve));

  expect(stderr).toBe("");
  expect(exitCode).toBe(0);
  const reports = stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as unknown);
  expect(reports).toEqual([
    { role: "bridge", ps: session.pid, system: session.pid },
    { role: "hook", ps: session.pid, system: session.pid },
  ]);
}, 20_000);
