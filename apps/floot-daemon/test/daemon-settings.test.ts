import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
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
      gateTimeoutMs: 30_000,
      cliStartHoldMs: 2_000,
      keeper: true,
    });
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
