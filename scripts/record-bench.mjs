// Benchmark history is generated, never written as prose: `pnpm bench` runs each bench through this
// script, which passes the bench's output through and appends one dated entry to the BENCHMARKS.md of
// the package it runs in, from the JSON document the bench printed: when, on what machine and commit,
// and every figure of it (same-run baselines included, as the bench reports them).
//
//   node ../../scripts/record-bench.mjs bench/x.bench.mjs [bench arguments...]
//
// The entry goes at the end of the section of its bench (`## node bench/x.bench.mjs`), which is added
// at the end of the file the first time; everything else in the file is kept as it is. A bench that
// fails, or prints anything but one JSON document on stdout, changes nothing and fails the run. Tables
// are written as biome formats them, so `biome check .` passes after a run.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { arch, cpus, loadavg, release, totalmem, type } from "node:os";
import { basename, join } from "node:path";
import { pathToFileURL } from "node:url";

export const benchmarksFile = "BENCHMARKS.md";

/** The first lines of a new BENCHMARKS.md for the package named `name`. */
export function fileHeader(name) {
  return [
    `# Benchmarks: ${name}`,
    "",
    "What `pnpm bench` measured, one entry per run of each bench: the date, the machine, the commit and",
    "every figure of the JSON document the bench printed, same-run baselines included. `pnpm bench` appends",
    "the entries (`scripts/record-bench.mjs`); they are not edited by hand.",
    "",
  ].join("\n");
}

/** The machine a bench runs on, as an entry describes it. */
export function describeMachine() {
  const processors = cpus();
  const model = processors[0]?.model.trim().replace(/\s+/g, " ") ?? "unknown processor";
  const memoryGiB = Math.round((totalmem() / 2 ** 30) * 10) / 10;
  return `${type()} ${release()} ${arch()}, ${processors.length} × ${model}, ${memoryGiB} GiB, Node ${process.version}`;
}

/** The commit the bench ran on (short), and whether the checkout had changes beside it. */
export function describeCommit(cwd) {
  try {
    const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd, encoding: "utf8" }).trim();
    const changed = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], {
      cwd,
      encoding: "utf8",
    })
      .split("\n")
      .some((line) => line !== "" && !line.endsWith(benchmarksFile));
    return changed ? `${commit} with uncommitted changes` : commit;
  } catch {
    return "no git commit";
  }
}

const labelKeys = ["name", "pi", "label", "store", "mode"];
const inlineArrayLimit = 12;

function valueText(value) {
  if (typeof value === "string") return value;
  return JSON.stringify(value);
}

/**
 * Every figure of a bench's JSON as `[path, value]`, in the document's order. An array of objects is
 * walked item by item, each named by its `name`/`pi`/`label`/`store`/`mode` when it has one (else its
 * index); an array of plain values is one figure, its values listed (more than 12: their count, min,
 * median and max).
 */
export function figuresOf(json, path = "") {
  if (Array.isArray(json)) {
    if (json.every((item) => item === null || typeof item !== "object")) {
      return [[path, arrayText(json)]];
    }
    return json.flatMap((item, index) => {
      const labelKey = isObject(item) ? labelKeys.find((key) => typeof item[key] === "string") : undefined;
      const name = labelKey ? `${path}[${item[labelKey]}]` : `${path}[${index}]`;
      if (!isObject(item)) return figuresOf(item, name);
      const rest = Object.fromEntries(Object.entries(item).filter(([key]) => key !== labelKey));
      return figuresOf(rest, name);
    });
  }
  if (isObject(json)) {
    const entries = Object.entries(json);
    if (entries.length === 0) return [[path, "{}"]];
    return entries.flatMap(([key, value]) => figuresOf(value, path === "" ? key : `${path}.${key}`));
  }
  return [[path === "" ? "value" : path, valueText(json)]];
}

function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function arrayText(values) {
  if (values.length <= inlineArrayLimit) return `[${values.map(valueText).join(", ")}]`;
  const numbers = values.filter((value) => typeof value === "number").sort((a, b) => a - b);
  if (numbers.length !== values.length) return `${values.length} values`;
  const median = numbers[Math.floor(numbers.length / 2)];
  return `${values.length} values: min ${numbers[0]}, median ${median}, max ${numbers.at(-1)}`;
}

/** One table cell: no line break, `|` escaped, as biome leaves it. */
function cell(text) {
  return String(text)
    .replace(/\s*\n\s*/g, " ")
    .replace(/\|/g, "\\|");
}

const width = (text) => [...text].length;

/** A Markdown table padded as biome pads one (columns as wide as their widest cell, at least 3). */
export function markdownTable(header, rows) {
  const cells = [header, ...rows].map((row) => row.map(cell));
  const widths = header.map((_, column) => Math.max(3, ...cells.map((row) => width(row[column]))));
  const line = (row) =>
    `| ${row.map((text, column) => text + " ".repeat(widths[column] - width(text))).join(" | ")} |`;
  const [head, ...body] = cells;
  return [line(head), `| ${widths.map((each) => "-".repeat(each)).join(" | ")} |`, ...body.map(line)].join(
    "\n",
  );
}

/**
 * One entry: `### <date> UTC, <commit>`, what ran where, and the figures. `run` holds `command`,
 * `startedAt` (a Date), `seconds`, `machine`, `commit`, `load` ({before, after}: 1-minute averages)
 * and `json` (the bench's document).
 */
export function renderEntry(run) {
  const date = run.startedAt.toISOString().slice(0, 16).replace("T", " ");
  return [
    `### ${date} UTC, ${run.commit}`,
    "",
    `- command: \`${run.command}\`, ${run.seconds} s`,
    `- machine: ${run.machine}`,
    `- load average (1 minute): ${run.load.before} before, ${run.load.after} after`,
    "",
    markdownTable(["figure", "value"], figuresOf(run.json)),
    "",
  ].join("\n");
}

/** The section heading of a bench, e.g. `## node bench/daemon.bench.mjs`. */
export function sectionHeading(script) {
  return `## node ${script}`;
}

/**
 * `markdown` with `entry` at the end of the section `heading` (added at the end of the file when there
 * is none); nothing else changes. Headings inside fenced code blocks are not sections.
 */
export function addEntry(markdown, heading, entry) {
  const lines = markdown.replace(/\n*$/, "").split("\n");
  let inFence = false;
  let start = -1;
  let end = lines.length;
  for (const [index, line] of lines.entries()) {
    if (line.startsWith("```")) inFence = !inFence;
    if (inFence || !/^## /.test(line)) continue;
    if (start === -1 && line === heading) start = index;
    else if (start !== -1) {
      end = index;
      break;
    }
  }
  if (start === -1) return `${lines.join("\n")}\n\n${heading}\n\n${entry.replace(/\n*$/, "")}\n`;
  const before = lines.slice(0, end).join("\n").replace(/\n*$/, "");
  const after = lines.slice(end).join("\n");
  return `${before}\n\n${entry.replace(/\n*$/, "")}\n${after === "" ? "" : `\n${after}\n`}`;
}

/** The one JSON document a bench printed, or an error naming what it printed instead. */
export function parseBenchOutput(stdout, script) {
  try {
    const json = JSON.parse(stdout);
    if (typeof json === "object" && json !== null) return json;
  } catch {}
  const shown = stdout.trim() === "" ? "nothing" : `${JSON.stringify(stdout.trim().slice(0, 80))}…`;
  throw new Error(`${script} printed ${shown} on stdout, not one JSON document`);
}

/** Runs the bench in `cwd` (its stdout passed through) and appends its entry to `cwd`'s BENCHMARKS.md. */
export async function recordBench({ cwd, script, args = [], out = process.stdout }) {
  const startedAt = new Date();
  const before = loadavg()[0];
  const child = spawn(process.execPath, [script, ...args], { cwd, stdio: ["inherit", "pipe", "inherit"] });
  const chunks = [];
  child.stdout.on("data", (chunk) => {
    chunks.push(chunk);
    out.write(chunk);
  });
  const [code, signal] = await new Promise((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (exitCode, exitSignal) => resolve([exitCode, exitSignal]));
  });
  if (code !== 0) throw new Error(`${script} ${signal ? `was ended by ${signal}` : `exited ${code}`}`);
  const json = parseBenchOutput(Buffer.concat(chunks).toString("utf8"), script);
  const file = join(cwd, benchmarksFile);
  const command = ["node", script, ...args].join(" ");
  const entry = renderEntry({
    command,
    startedAt,
    seconds: Math.round((Date.now() - startedAt.getTime()) / 1000),
    machine: describeMachine(),
    commit: describeCommit(cwd),
    load: { before: round(before), after: round(loadavg()[0]) },
    json,
  });
  const existing = existsSync(file) ? readFileSync(file, "utf8") : fileHeader(packageName(cwd));
  writeFileSync(file, addEntry(existing, sectionHeading(script), entry));
  return file;
}

const round = (value) => Math.round(value * 100) / 100;

function packageName(cwd) {
  try {
    return JSON.parse(readFileSync(join(cwd, "package.json"), "utf8")).name;
  } catch {
    return basename(cwd);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const [script, ...args] = process.argv.slice(2);
  if (!script) {
    console.error("usage: node scripts/record-bench.mjs <bench script> [its arguments...]");
    process.exit(2);
  }
  try {
    const file = await recordBench({ cwd: process.cwd(), script, args });
    console.error(`record-bench: ${script}: entry added to ${file}`);
  } catch (error) {
    console.error(`record-bench: ${error.message}; ${benchmarksFile} not changed`);
    process.exit(1);
  }
}
