import { commandPaths, rootOf, runProgram, synopsis } from "../src/index.js";
import { describeCommandTable } from "../src/testing/index.js";
import { demo, type Seen } from "./fixture.js";

// The suite the apps run over their own tables, run over the demo program's.
const reference = {
  path: "the demo's reference",
  text: commandPaths(rootOf(demo).commands)
    .map(({ path, command }) => synopsis(demo.name, path, command))
    .join("\n"),
};

describeCommandTable({
  program: demo,
  reference,
  async run(argv) {
    const out: string[] = [];
    const err: string[] = [];
    const seen: Seen = { calls: [] };
    const code = await runProgram(
      demo,
      argv,
      { stdout: (t) => out.push(t), stderr: (t) => err.push(t) },
      seen,
    );
    return { code, stdout: out.join(""), stderr: err.join("") };
  },
});
