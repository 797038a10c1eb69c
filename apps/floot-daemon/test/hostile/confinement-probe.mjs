// What a tool call of a turn can reach, run by the agent's shell tool: prints one line
// `PROBE {json}` for the test to read from the tool's output. Argument: a JSON file (in the workspace)
// naming {stateDir, apiSocket, daemonPid, port, otherWorkspace}.
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { connect } from "node:net";
import { homedir } from "node:os";
import { join } from "node:path";

const places = JSON.parse(readFileSync(process.argv[2], "utf8"));
const outcome = (run) => {
  try {
    run();
    return "ok";
  } catch (error) {
    return error.code ?? String(error.message);
  }
};
const connectTo = (options) =>
  new Promise((resolve) => {
    const socket = connect(options);
    const done = (result) => {
      socket.destroy();
      resolve(result);
    };
    socket.once("connect", () => done("ok"));
    socket.once("error", (error) => done(error.code ?? error.message));
    setTimeout(() => done("timeout"), 5_000).unref();
  });
const httpGet = (port) =>
  new Promise((resolve) => {
    const call = request({ host: "127.0.0.1", port, path: "/v1/status", timeout: 5_000 }, (response) => {
      response.resume();
      resolve(`status ${response.statusCode}`);
    });
    call.once("error", (error) => resolve(error.code ?? error.message));
    call.once("timeout", () => call.destroy(new Error("timeout")));
    call.end();
  });
const processesNamed = (fragment) => {
  let found = 0;
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, "utf8").includes(fragment)) found += 1;
    } catch {}
  }
  return found;
};

const report = {
  readDaemonJson: outcome(() => readFileSync(join(places.stateDir, "daemon.json"))),
  readDaemonKey: outcome(() => readFileSync(join(places.stateDir, "daemon.key"))),
  seesApiSocket: existsSync(places.apiSocket),
  seesJournal: existsSync(join(places.stateDir, "journal.sqlite")),
  readOtherWorkspace: outcome(() => readFileSync(join(places.otherWorkspace, "notes.txt"))),
  apiSocket: await connectTo({ path: places.apiSocket }),
  daemonPort: await httpGet(places.port),
  daemonProc: outcome(() => readFileSync(`/proc/${places.daemonPid}/cmdline`)),
  daemonMem: outcome(() => readFileSync(`/proc/${places.daemonPid}/environ`)),
  shimProcesses: processesNamed("shim.mjs"),
  // Where these land (if anywhere) the test checks on the real dirs.
  writeStateDir: outcome(() => writeFileSync(join(places.stateDir, "planted"), "x")),
  writeOtherWorkspace: outcome(() => writeFileSync(join(places.otherWorkspace, "planted"), "x")),
  writeHome: outcome(() => writeFileSync(join(homedir(), "planted"), "x")),
  writeTmp: outcome(() => writeFileSync(`/tmp/floot-planted-${process.pid}`, "x")),
  writeWorkspace: outcome(() => writeFileSync("probe-wrote.txt", "inside")),
};
console.log(`PROBE ${JSON.stringify(report)}`);
