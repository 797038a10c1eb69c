import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { readDaemonSettings, SettingError } from "../src/daemon/settings.js";
import { bundlePath } from "./daemon-harness.js";

// Issue 35: the daemon's settings are read and checked once, before it starts anything; a bad value
// is a usage error naming the variable (exit 2, as bee does), never silently the default.

let root: string | undefined;
afterEach(() => {
  if (root) rmSync(root, { recursive: true, force: true });
  root = undefined;
});

describe("the daemon's settings", () => {
  test("unset or empty: the defaults; set: the value", () => {
    const defaults = readDaemonSettings({});
    expect(defaults).toMatchObject({
      toolTimeoutMs: 3_600_000,
      gateTimeoutMs: 60_000,
      cliStartHoldMs: 2_000,
      keeper: true,
      afterCliLost: "continue",
    });
    expect(readDaemonSettings({ FLOOT_AFTER_CLI_LOST: "interrupt" }).afterCliLost).toBe("interrupt");
    expect(readDaemonSettings({ FLOOT_KEEPER: "off" }).keeper).toBe(false);
    expect(readDaemonSettings({ FLOOT_KEEPER: "on" }).keeper).toBe(true);
    expect(readDaemonSettings({ FLOOT_TOOL_TIMEOUT_MS: "" })).toEqual(defaults);
    expect(
      readDaemonSettings({ FLOOT_TOOL_TIMEOUT_MS: "90000", FLOOT_GATE_TIMEOUT_MS: "5000" }),
    ).toMatchObject({
      toolTimeoutMs: 90_000,
      gateTimeoutMs: 5_000,
    });
  });

  test.each([
    ["FLOOT_TOOL_TIMEOUT_MS", "1h"],
    ["FLOOT_GATE_TIMEOUT_MS", "0"],
    ["FLOOT_CLI_START_HOLD_MS", "-5"],
    ["FLOOT_TOOL_TIMEOUT_MS", "99999999999"],
    ["FLOOT_MAX_CONNECTIONS", "lots"],
    ["FLOOT_IDLE_TIMEOUT_MS", "1.5"],
    ["FLOOT_KEEPER", "yes"],
    ["FLOOT_AFTER_CLI_LOST", "retry"],
    ["FLOOT_NOTIFY_TIMEOUT_MS", "10s"],
  ])("%s=%s is refused by name", (variable, value) => {
    let caught: unknown;
    try {
      readDaemonSettings({ [variable]: value });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(SettingError);
    expect(caught).toMatchObject({ variable });
    expect((caught as Error).message).toContain(JSON.stringify(value));
  });

  test("the notify command: the flag over the variable, split at whitespace, its program found now", () => {
    root = mkdtempSync(join(tmpdir(), "floot-settings-"));
    const script = join(root, "notify.sh");
    writeFileSync(script, "#!/bin/sh\n", { mode: 0o755 });
    const env = {
      PATH: `/nonexistent:${dirname(process.execPath)}`,
      FLOOT_NOTIFY_COMMAND: `${script} --from-env`,
    };
    expect(readDaemonSettings({})).toMatchObject({ notifyTimeoutMs: 10_000 });
    expect(readDaemonSettings({}).notifyCommand).toBeUndefined();
    expect(readDaemonSettings(env).notifyCommand).toEqual([script, "--from-env"]);
    // The flag wins; a bare name is looked up on PATH, a relative path from the working dir.
    expect(readDaemonSettings(env, { notifyCommand: "node  -e  0" }).notifyCommand).toEqual([
      process.execPath,
      "-e",
      "0",
    ]);
    expect(readDaemonSettings({}, { notifyCommand: "./notify.sh a", cwd: root }).notifyCommand).toEqual([
      script,
      "a",
    ]);
    const refusal = (value: string, variable = "--notify-command") => {
      try {
        readDaemonSettings({ PATH: env.PATH }, { notifyCommand: value, cwd: root });
      } catch (error) {
        expect(error).toMatchObject({ variable });
        return (error as Error).message;
      }
      throw new Error(`${value} was taken`);
    };
    expect(refusal("")).toBe("--notify-command: is empty; give a program and its arguments");
    expect(refusal(`${script} "hello world"`)).toContain("no shell runs it");
    expect(refusal(`${script} $HOME`)).toContain('"$HOME" would reach the program as is');
    expect(refusal(`${script} > log`)).toContain('">" would reach the program as is');
    expect(refusal("no-such-notifier")).toBe(
      "--notify-command: no-such-notifier: no such program (a bare name is looked up on PATH)",
    );
    writeFileSync(join(root, "plain"), "", { mode: 0o644 });
    expect(refusal("./plain")).toBe(`--notify-command: ${join(root, "plain")}: not executable`);
  });

  test("floot daemon with FLOOT_TOOL_TIMEOUT_MS=1h exits 2 naming it, before it makes its state dir", () => {
    root = mkdtempSync(join(tmpdir(), "floot-settings-"));
    const stateDir = join(root, "state");
    const result = spawnSync(process.execPath, [bundlePath, "daemon", "--state", stateDir], {
      env: { PATH: process.env.PATH, FLOOT_TOOL_TIMEOUT_MS: "1h", FLOOT_RUNTIME_DIR: join(root, "run") },
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(result.status).toBe(2);
    expect(result.stderr).toMatch(
      /^floot daemon: FLOOT_TOOL_TIMEOUT_MS: must be a whole number of milliseconds[^\n]*"1h"/,
    );
    expect(existsSync(stateDir)).toBe(false);
  });
});
