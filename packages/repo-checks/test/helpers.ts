import { readdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseDocument } from "yaml";

export const repoRoot = join(dirname(fileURLToPath(import.meta.url)), "../../..");

export function readText(path: string): string {
  return readFileSync(join(repoRoot, path), "utf8");
}

export function readJson(path: string): unknown {
  return JSON.parse(readText(path));
}

/** YAML 1.2 (so `on:` stays a string key), duplicate keys and syntax errors refused. */
export function parseYaml(text: string, source: string): unknown {
  const document = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  if (document.errors.length > 0) {
    throw new Error(`${source}: ${document.errors.map((error) => error.message).join("\n")}`);
  }
  return document.toJS();
}

export function readYaml(path: string): unknown {
  return parseYaml(readText(path), path);
}

export type JsonRecord = Record<string, unknown>;

export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export function record(value: unknown, what: string): JsonRecord {
  if (!isRecord(value)) throw new Error(`${what} is not a mapping`);
  return value;
}

export function workflowFiles(): string[] {
  return readdirSync(join(repoRoot, ".github/workflows"))
    .filter((name) => /\.ya?ml$/.test(name))
    .sort()
    .map((name) => `.github/workflows/${name}`);
}

export interface Workflow {
  name?: string;
  on: unknown;
  permissions?: unknown;
  jobs: Record<string, Job>;
}

export interface Job {
  name?: string;
  "runs-on"?: unknown;
  needs?: string | string[];
  permissions?: unknown;
  strategy?: { matrix?: unknown };
  env?: Record<string, unknown>;
  steps?: Step[];
  [key: string]: unknown;
}

export interface Step {
  name?: string;
  id?: string;
  if?: unknown;
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
  env?: Record<string, unknown>;
  [key: string]: unknown;
}

/** The workflow, after the structural checks of workflows.test.ts have passed for it. */
export function readWorkflow(path: string): Workflow {
  return readYaml(path) as Workflow;
}

export interface AppEntry {
  workspace: string;
  dir: string;
  kind: "cli" | "pi-package";
  description: string;
  mainProgram: string;
  entry: string;
  externals: string[];
  hostProvided: string[];
  nativeExecutables: string[];
  piProvider?: string;
  piHosts?: string[];
}

export interface AppsManifest {
  apps: Record<string, AppEntry>;
  allowBuilds: string[];
  runtimeOmit: string[];
}

export function readApps(): AppsManifest {
  return readJson("nix/apps.json") as AppsManifest;
}

/** The `.#name` installables of a `nix build` command line. */
export function installables(command: string): string[] {
  return [...command.matchAll(/(?:^|\s)\.#([A-Za-z0-9_-]+)/g)].map((match) => match[1] as string).sort();
}

/** A GitHub Actions expression, `${{ body }}`, as it appears in a workflow. */
export function expression(body: string): string {
  return `\${{ ${body} }}`;
}

/** The lockfile with another integrity hash for zod (as after an update). */
export function bumpZod(text: string) {
  const next = text.replace(
    /(\n {2}zod@4\.6\.7:\n {4}resolution: \{integrity: )sha512-[^}]+/,
    `$1${"sha512-"}${"Z".repeat(86)}==`,
  );
  if (next === text) throw new Error("pnpm-lock.yaml has no zod@4.6.7 entry (the fixture is stale)");
  return next;
}
