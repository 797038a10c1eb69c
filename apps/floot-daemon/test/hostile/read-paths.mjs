// Run as another local user (uid 65534): try to read each path given and say what happened. Node builtins only.
import { readFileSync } from "node:fs";

const results = process.argv.slice(2).map((path) => {
  try {
    readFileSync(path);
    return { path, outcome: "read" };
  } catch (error) {
    return { path, outcome: error.code };
  }
});
process.stdout.write(`${JSON.stringify({ uid: process.getuid(), results })}\n`);
