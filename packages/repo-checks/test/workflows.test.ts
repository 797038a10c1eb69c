// Every GitHub Actions workflow has the shape Actions accepts, and pins each action to a major.
import { describe, expect, it } from "vitest";
import {
  expression,
  isRecord,
  type JsonRecord,
  parseYaml,
  readText,
  record,
  workflowFiles,
} from "./helpers.js";

const topLevelKeys = new Set([
  "name",
  "run-name",
  "on",
  "permissions",
  "env",
  "defaults",
  "concurrency",
  "jobs",
]);
const events = new Set([
  "push",
  "pull_request",
  "pull_request_target",
  "workflow_dispatch",
  "workflow_call",
  "workflow_run",
  "schedule",
  "release",
  "merge_group",
  "repository_dispatch",
]);
const jobKeys = new Set([
  "name",
  "runs-on",
  "needs",
  "if",
  "permissions",
  "environment",
  "concurrency",
  "outputs",
  "env",
  "defaults",
  "steps",
  "timeout-minutes",
  "strategy",
  "continue-on-error",
  "container",
  "services",
]);
const stepKeys = new Set([
  "id",
  "if",
  "name",
  "uses",
  "run",
  "with",
  "env",
  "shell",
  "working-directory",
  "continue-on-error",
  "timeout-minutes",
]);
const permissionScopes = new Set([
  "actions",
  "attestations",
  "checks",
  "contents",
  "deployments",
  "id-token",
  "issues",
  "discussions",
  "packages",
  "pages",
  "pull-requests",
  "repository-projects",
  "security-events",
  "statuses",
]);
const contexts = new Set([
  "github",
  "env",
  "vars",
  "secrets",
  "inputs",
  "matrix",
  "strategy",
  "steps",
  "needs",
  "runner",
  "job",
]);
const pinnedToMajor = /^[A-Za-z0-9_.-]+\/[A-Za-z0-9_.-]+(?:\/[A-Za-z0-9_./-]+)?@v\d+$/;

/** Every string in a YAML value, with the path that leads to it. */
function strings(value: unknown, path: string, found: [string, string][] = []): [string, string][] {
  if (typeof value === "string") found.push([path, value]);
  else if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) strings(item, `${path}[${index}]`, found);
  } else if (isRecord(value))
    for (const [key, item] of Object.entries(value)) strings(item, `${path}.${key}`, found);
  return found;
}

/** Problems with the `${{ }}` expressions in one string. */
function expressionProblems(text: string, matrixKeys: Set<string> | null): string[] {
  const problems: string[] = [];
  const opened = text.split("${{").length - 1;
  const expressions = [...text.matchAll(/\$\{\{(.*?)\}\}/gs)].map((match) => match[1] as string);
  if (expressions.length !== opened) problems.push(`unbalanced \${{ }} in ${JSON.stringify(text)}`);
  for (const expression of expressions) {
    const unquoted = expression.replace(/'[^']*'/g, "''");
    for (const [, name, property] of unquoted.matchAll(/(?<![\w.-])([A-Za-z_][\w-]*)\.([\w-]+)/g)) {
      if (!contexts.has(name as string)) problems.push(`unknown context ${name} in \${{${expression}}}`);
      if (name === "matrix" && matrixKeys && !matrixKeys.has(property as string)) {
        problems.push(`matrix.${property} is not in the job's matrix`);
      }
      if (name === "matrix" && !matrixKeys)
        problems.push(`matrix.${property} used in a job without a matrix`);
    }
  }
  return problems;
}

function matrixKeysOf(job: JsonRecord): Set<string> | null {
  const matrix = isRecord(job.strategy) ? job.strategy.matrix : undefined;
  if (!isRecord(matrix)) return null;
  const keys = new Set(Object.keys(matrix).filter((key) => key !== "include" && key !== "exclude"));
  for (const entry of Array.isArray(matrix.include) ? matrix.include : []) {
    if (isRecord(entry)) for (const key of Object.keys(entry)) keys.add(key);
  }
  return keys;
}

function permissionProblems(value: unknown, where: string): string[] {
  if (value === undefined) return [];
  if (typeof value === "string")
    return ["read-all", "write-all"].includes(value) ? [] : [`${where}: ${value}`];
  if (!isRecord(value)) return [`${where}: permissions must be a mapping`];
  return Object.entries(value).flatMap(([scope, access]) => [
    ...(permissionScopes.has(scope) ? [] : [`${where}: unknown permission ${scope}`]),
    ...(["read", "write", "none"].includes(String(access)) ? [] : [`${where}: ${scope}: ${String(access)}`]),
  ]);
}

/** All structural problems of one workflow file; empty when Actions would accept it. */
export function workflowProblems(text: string, source: string): string[] {
  const problems: string[] = [];
  const workflow = record(parseYaml(text, source), source);
  for (const key of Object.keys(workflow)) if (!topLevelKeys.has(key)) problems.push(`unknown key ${key}`);
  if (typeof workflow.name !== "string") problems.push("no name");

  const on = workflow.on;
  const triggers =
    typeof on === "string" ? [on] : Array.isArray(on) ? on.map(String) : isRecord(on) ? Object.keys(on) : [];
  if (triggers.length === 0) problems.push("no `on` triggers");
  for (const trigger of triggers) if (!events.has(trigger)) problems.push(`unknown event ${trigger}`);
  problems.push(...permissionProblems(workflow.permissions, "workflow"));

  const jobs = isRecord(workflow.jobs) ? workflow.jobs : {};
  if (Object.keys(jobs).length === 0) problems.push("no jobs");
  for (const [id, value] of Object.entries(jobs)) {
    const where = `jobs.${id}`;
    if (!/^[A-Za-z_][A-Za-z0-9_-]*$/.test(id)) problems.push(`${where}: invalid job id`);
    if (!isRecord(value)) {
      problems.push(`${where}: not a mapping`);
      continue;
    }
    for (const key of Object.keys(value))
      if (!jobKeys.has(key)) problems.push(`${where}: unknown key ${key}`);
    if (value["runs-on"] === undefined) problems.push(`${where}: no runs-on`);
    const needs = value.needs === undefined ? [] : [value.needs].flat();
    for (const need of needs)
      if (!(String(need) in jobs)) problems.push(`${where}: needs unknown job ${need}`);
    problems.push(...permissionProblems(value.permissions, where));
    const matrixKeys = matrixKeysOf(value);
    for (const [path, text] of strings({ ...value, steps: undefined }, where)) {
      problems.push(...expressionProblems(text, matrixKeys).map((problem) => `${path}: ${problem}`));
    }

    const steps = Array.isArray(value.steps) ? value.steps : [];
    if (steps.length === 0) problems.push(`${where}: no steps`);
    steps.forEach((step: unknown, index: number) => {
      const at = `${where}.steps[${index}]`;
      if (!isRecord(step)) {
        problems.push(`${at}: not a mapping`);
        return;
      }
      for (const key of Object.keys(step)) if (!stepKeys.has(key)) problems.push(`${at}: unknown key ${key}`);
      if ((step.uses === undefined) === (step.run === undefined))
        problems.push(`${at}: needs exactly one of uses, run`);
      if (step.uses !== undefined && !pinnedToMajor.test(String(step.uses))) {
        problems.push(`${at}: uses ${String(step.uses)} is not pinned to a major version (owner/repo@vN)`);
      }
      if (step.run !== undefined && typeof step.run !== "string") problems.push(`${at}: run is not a string`);
      if (typeof step.run === "string" && /\$\{\{\s*secrets\./.test(step.run)) {
        problems.push(`${at}: a secret is interpolated into a run script (pass it through env)`);
      }
      if (step.with !== undefined && !isRecord(step.with)) problems.push(`${at}: with is not a mapping`);
      if (isRecord(step.with)) {
        for (const [key, item] of Object.entries(step.with)) {
          if (isRecord(item) || Array.isArray(item)) problems.push(`${at}: with.${key} is not a scalar`);
        }
      }
      for (const [path, text] of strings(step, at)) {
        problems.push(...expressionProblems(text, matrixKeys).map((problem) => `${path}: ${problem}`));
      }
    });
  }
  return problems;
}

describe("GitHub Actions workflows", () => {
  const files = workflowFiles();

  it("finds the workflows", () => {
    expect(files).toEqual(
      expect.arrayContaining([
        ".github/workflows/ci.yml",
        ".github/workflows/nix.yml",
        ".github/workflows/release.yml",
      ]),
    );
  });

  it.each(files)("%s has the structure Actions accepts and pins every action to a major", (file) => {
    expect(workflowProblems(readText(file), file)).toEqual([]);
  });
});

describe("the workflow structure check", () => {
  const valid = `
name: Demo
on:
  push:
    branches: [main]
permissions:
  contents: read
jobs:
  test:
    runs-on: \${{ matrix.os }}
    strategy:
      matrix:
        include:
          - os: ubuntu-24.04
    steps:
      - uses: actions/checkout@v6
      - run: echo hi
`;

  it("accepts a valid workflow", () => {
    expect(workflowProblems(valid, "valid")).toEqual([]);
  });

  it.each([
    ["an action pinned to a tag", valid.replace("checkout@v6", "checkout@v6.0.1"), "not pinned to a major"],
    ["an action pinned to a branch", valid.replace("checkout@v6", "checkout@main"), "not pinned to a major"],
    [
      "a step with both uses and run",
      valid.replace("- run: echo hi", "- run: echo hi\n        uses: a/b@v1"),
      "exactly one",
    ],
    ["a job without runs-on", valid.replace(`    runs-on: ${expression("matrix.os")}\n`, ""), "no runs-on"],
    [
      "an unknown matrix key",
      valid.replace("matrix.os", "matrix.system"),
      "matrix.system is not in the job's matrix",
    ],
    [
      "an unknown context",
      valid.replace("echo hi", `echo ${expression("secret.X")}`),
      "unknown context secret",
    ],
    ["an unclosed expression", valid.replace("echo hi", "echo $" + "{{ github.sha"), "unbalanced"],
    [
      "a secret in a run script",
      valid.replace("echo hi", `echo ${expression("secrets.TOKEN")}`),
      "secret is interpolated",
    ],
    [
      "a misspelt step key",
      valid.replace("- run: echo hi", "- run: echo hi\n        wiht: {}"),
      "unknown key wiht",
    ],
    ["an unknown event", valid.replace("  push:", "  pushh:"), "unknown event pushh"],
    ["a bad permission", valid.replace("contents: read", "contents: admin"), "contents: admin"],
  ])("refuses %s", (_, text, problem) => {
    expect(workflowProblems(text, "broken").join("\n")).toContain(problem);
  });

  it("refuses duplicate keys", () => {
    expect(() => workflowProblems(valid.replace("name: Demo", "name: Demo\nname: Again"), "dup")).toThrow();
  });
});
