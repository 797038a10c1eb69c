import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, test } from "vitest";
import { serializedPrivateFile } from "../src/daemon/serialized-file.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

/** A writer whose writes finish only when the test says, in whatever order it says. */
function heldWriter() {
  const writes: { contents: string; finish: (error?: Error) => void }[] = [];
  const write = (_path: string, contents: string) =>
    new Promise<void>((resolve, reject) => {
      writes.push({ contents, finish: (error) => (error ? reject(error) : resolve()) });
    });
  return { writes, write };
}

const settled = () => new Promise((resolve) => setImmediate(resolve));

test("one write at a time, each of the state when it starts; saves asked for meanwhile share the next", async () => {
  const state = { value: "a" };
  const { writes, write } = heldWriter();
  const save = serializedPrivateFile("/unused", () => state.value, write);
  const done: string[] = [];
  const first = save().then(() => done.push("first"));
  await settled();
  state.value = "b";
  const second = save().then(() => done.push("second"));
  state.value = "c";
  const third = save().then(() => done.push("third"));
  await settled();
  // The second and third wait for the first write; none is started beside it.
  expect(writes.map((each) => each.contents)).toEqual(["a"]);
  writes[0]!.finish();
  await first;
  await settled();
  // One write for both, of the state as it was when it started: the last change included.
  expect(writes.map((each) => each.contents)).toEqual(["a", "c"]);
  expect(done).toEqual(["first"]);
  writes[1]!.finish();
  await Promise.all([second, third]);
  expect(done).toEqual(["first", "second", "third"]);
});

test("a failed write fails the saves that waited on it; the next save writes again", async () => {
  const { writes, write } = heldWriter();
  const save = serializedPrivateFile("/unused", () => "x", write);
  const failed = save();
  await settled();
  writes[0]!.finish(new Error("disk full"));
  await expect(failed).rejects.toThrow("disk full");
  const retried = save();
  await settled();
  writes[1]!.finish();
  await retried;
  expect(writes).toHaveLength(2);
});

test("on disk: saves fired at once leave the last state, 0600", async () => {
  dir = mkdtempSync(join(tmpdir(), "floot-serialized-file-"));
  const path = join(dir, "list.json");
  const items: number[] = [];
  const save = serializedPrivateFile(path, () => JSON.stringify(items));
  await Promise.all(
    Array.from({ length: 50 }, (_, index) => {
      items.push(index);
      return save();
    }),
  );
  expect(JSON.parse(readFileSync(path, "utf8"))).toEqual(Array.from({ length: 50 }, (_, index) => index));
  expect(statSync(path).mode & 0o777).toBe(0o600);
});
