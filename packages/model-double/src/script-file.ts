import { readFile } from "node:fs/promises";
import { describeError } from "@bridgeworks/runtime";
import { InvalidScriptError, parseScript, type Script } from "./script.js";

/** Reads and validates a JSON script; every failure is an InvalidScriptError naming the file. */
export async function loadScriptFile(path: string): Promise<Script> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (error) {
    const reason = describeError(error);
    throw new InvalidScriptError(`cannot read script ${path}: ${reason}`, [reason]);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    const reason = describeError(error);
    throw new InvalidScriptError(`script ${path} is not JSON: ${reason}`, [reason]);
  }
  try {
    return parseScript(value);
  } catch (error) {
    if (!(error instanceof InvalidScriptError)) throw error;
    throw new InvalidScriptError(`script ${path}: ${error.message}`, error.issues);
  }
}
