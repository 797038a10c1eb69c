// README (and docs page) code examples are type-checked, the way the MCP TypeScript SDK does it with `*.examples.ts`:
// every ```ts block in a README names its source in the fence, ```ts source="examples/use.examples.ts#use",
// a region of an examples file (`//#region use` … `//#endregion use`) that the package's test typecheck
// covers (its test/tsconfig.json includes ../examples), and the block holds exactly that region.
//
//   node scripts/readme-examples.mjs            check; exit 1 naming every unsourced or stale block
//   node scripts/readme-examples.mjs --write    copy each region into its README block, then check
import { execFileSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const fence = /^```(ts|typescript)\b(.*)$/;

/** Every README.md and docs page (`docs/*.md`) git knows of (tracked, or new and not ignored), relative to `root`. */
export function readmeFiles(root) {
  const listed = execFileSync(
    "git",
    [
      "ls-files",
      "--cached",
      "--others",
      "--exclude-standard",
      "--",
      "README.md",
      "**/README.md",
      "**/docs/*.md",
    ],
    { cwd: root, encoding: "utf8" },
  );
  return listed.split("\n").filter((path) => path !== "" && existsSync(join(root, path)));
}

/** The TypeScript blocks of a README: where each starts (1-based line), its `source` and its body. */
export function typescriptBlocks(markdown) {
  const lines = markdown.split("\n");
  const blocks = [];
  for (let index = 0; index < lines.length; index += 1) {
    const open = fence.exec(lines[index]);
    if (!open) continue;
    const end = lines.findIndex((line, at) => at > index && line.startsWith("```"));
    if (end === -1) break;
    const source = /\bsource="([^"#]+)#([^"]+)"/.exec(open[2]);
    blocks.push({
      line: index + 1,
      bodyStart: index + 1,
      bodyEnd: end,
      source: source ? { file: source[1], region: source[2] } : undefined,
      body: lines.slice(index + 1, end).join("\n"),
    });
    index = end;
  }
  return blocks;
}

/** The text between `//#region name` and `//#endregion name`: blank lines around it and common indentation removed. */
export function regionOf(text, name) {
  const lines = text.split("\n");
  const start = lines.findIndex((line) => line.trim() === `//#region ${name}`);
  const end = lines.findIndex((line, at) => at > start && line.trim() === `//#endregion ${name}`);
  if (start === -1 || end === -1) return undefined;
  const body = lines.slice(start + 1, end);
  while (body.length > 0 && body[0].trim() === "") body.shift();
  while (body.length > 0 && body.at(-1).trim() === "") body.pop();
  const indent = Math.min(
    ...body.filter((line) => line.trim() !== "").map((line) => /^ */.exec(line)[0].length),
  );
  return body.map((line) => line.slice(Number.isFinite(indent) ? indent : 0)).join("\n");
}

/** Whether the examples file is type-checked: its package's test/tsconfig.json includes ../examples. */
function checkedByTypecheck(root, file) {
  let dir = dirname(file);
  while (dir.startsWith(root) && !existsSync(join(dir, "package.json"))) dir = dirname(dir);
  const tsconfig = join(dir, "test", "tsconfig.json");
  if (!existsSync(tsconfig)) return false;
  const include = JSON.parse(readFileSync(tsconfig, "utf8")).include ?? [];
  const examplesDir = relative(join(dir, "test"), dirname(file));
  return include.includes(examplesDir);
}

/** Every problem of the READMEs under `root`; with `write`, stale blocks are rewritten first. */
export function readmeExampleProblems(root, { write = false } = {}) {
  const problems = [];
  for (const readme of readmeFiles(root)) {
    const path = join(root, readme);
    let markdown = readFileSync(path, "utf8");
    // Last block first, so rewriting one never moves the lines of those still to check.
    for (const block of typescriptBlocks(markdown).reverse()) {
      const where = `${readme}:${block.line}`;
      if (!block.source) {
        problems.push(
          `${where}: a \`\`\`ts block needs source="<examples file>#<region>" (a type-checked *.examples.ts)`,
        );
        continue;
      }
      const file = resolve(dirname(path), block.source.file);
      if (!file.endsWith(".examples.ts") || !existsSync(file)) {
        problems.push(`${where}: source ${block.source.file} is not an existing *.examples.ts file`);
        continue;
      }
      if (!checkedByTypecheck(root, file)) {
        problems.push(`${where}: ${block.source.file} is not included by its package's test/tsconfig.json`);
        continue;
      }
      const region = regionOf(readFileSync(file, "utf8"), block.source.region);
      if (region === undefined) {
        problems.push(`${where}: ${block.source.file} has no region ${block.source.region}`);
      } else if (region !== block.body) {
        if (write) {
          const lines = markdown.split("\n");
          lines.splice(block.bodyStart, block.bodyEnd - block.bodyStart, ...region.split("\n"));
          markdown = lines.join("\n");
        } else {
          problems.push(
            `${where}: differs from ${block.source.file}#${block.source.region} (run node scripts/readme-examples.mjs --write)`,
          );
        }
      }
    }
    if (write) writeFileSync(path, markdown);
  }
  return problems;
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const root = resolve(dirname(fileURLToPath(import.meta.url)), "..");
  const problems = readmeExampleProblems(root, { write: process.argv.includes("--write") });
  for (const problem of problems) console.error(`readme-examples: ${problem}`);
  process.exitCode = problems.length > 0 ? 1 : 0;
}
