#!/usr/bin/env node
// A throwaway PostgreSQL cluster for tests, owned by the test run and living in one directory:
//   node scripts/postgres-test-cluster.mjs install        installs Debian's postgresql when missing (root)
//   node scripts/postgres-test-cluster.mjs start [DIR]    initdb + start in DIR (default: a new temp dir);
//                                                        prints the cluster as JSON, `dir` included
//   node scripts/postgres-test-cluster.mjs restart DIR    pg_ctl restart -m fast (connections drop)
//   node scripts/postgres-test-cluster.mjs halt DIR       stops the server, keeps the data
//   node scripts/postgres-test-cluster.mjs resume DIR     starts a halted server again
//   node scripts/postgres-test-cluster.mjs stop DIR       stops the server (by its pid) and removes DIR
// The server listens on 127.0.0.1 at a free port (password auth) and on a unix socket in DIR (trust,
// reachable only by root and the server's user). As root it runs as the `postgres` user, since
// PostgreSQL refuses to run as root. Everything but the JSON goes to stderr.
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  appendFileSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";

const [command, given] = process.argv.slice(2);
// The server's user must reach DIR, so a new DIR goes straight under the (world-traversable) temp dir.
const dir = command === "start" && !given ? mkdtempSync(join(tmpdir(), "bee-pg-")) : given;
const commands = { install, start, restart, halt, resume, stop };

if (!(command in commands) || (command !== "install" && !dir)) {
  console.error("usage: postgres-test-cluster.mjs install | start [DIR] | {restart|halt|resume|stop} DIR");
  process.exit(2);
}
try {
  await commands[command]();
} catch (error) {
  console.error(`postgres-test-cluster: ${command}: ${error.message}`);
  process.exit(1);
}

function install() {
  const found = findBinDir();
  if (found) return found;
  if (process.getuid?.() !== 0) {
    throw new Error("PostgreSQL is not installed and only root can install it: apt-get install postgresql");
  }
  console.error("postgres-test-cluster: installing Debian's postgresql");
  run("apt-get", ["update"], { env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" } });
  run("apt-get", ["install", "-y", "--no-install-recommends", "postgresql"], {
    env: { ...process.env, DEBIAN_FRONTEND: "noninteractive" },
  });
  const installed = findBinDir();
  if (!installed) throw new Error("installed postgresql but found no initdb under /usr/lib/postgresql/*/bin");
  return installed;
}

/** The newest /usr/lib/postgresql/<major>/bin holding initdb and pg_ctl. */
function findBinDir() {
  const root = "/usr/lib/postgresql";
  if (!existsSync(root)) return undefined;
  const majors = readdirSync(root)
    .filter((name) => /^\d+$/.test(name))
    .sort((a, b) => Number(b) - Number(a));
  for (const major of majors) {
    const bin = join(root, major, "bin");
    if (existsSync(join(bin, "initdb")) && existsSync(join(bin, "pg_ctl"))) return bin;
  }
  return undefined;
}

async function start() {
  const binDir = install();
  if (existsSync(join(dir, "cluster.json"))) throw new Error(`${dir} already holds a cluster`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const owner = serverUser();
  const dataDir = join(dir, "data");
  const socketDir = join(dir, "socket");
  mkdirSync(socketDir, { mode: 0o700 });
  const password = randomBytes(18).toString("hex");
  const passwordFile = join(dir, "password");
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  if (owner) for (const path of [dir, socketDir, passwordFile]) chownSync(path, owner.uid, owner.gid);

  asServerUser(owner, join(binDir, "initdb"), [
    "-D",
    dataDir,
    "-U",
    "postgres",
    "--auth-local=trust",
    "--auth-host=scram-sha-256",
    `--pwfile=${passwordFile}`,
    "-E",
    "UTF8",
    "--no-sync",
    "--no-instructions",
  ]);
  rmSync(passwordFile);
  const port = await freePort();
  // Throwaway data: durability settings off, room for every board process a test starts.
  appendFileSync(
    join(dataDir, "postgresql.conf"),
    [
      "",
      "# postgres-test-cluster.mjs",
      "listen_addresses = '127.0.0.1'",
      `port = ${port}`,
      `unix_socket_directories = '${socketDir}'`,
      "max_connections = 300",
      "shared_buffers = 32MB",
      "fsync = off",
      "synchronous_commit = off",
      "full_page_writes = off",
      "",
    ].join("\n"),
  );
  const cluster = {
    dir,
    url: `postgresql://postgres:${password}@127.0.0.1:${port}/postgres`,
    socketUrl: `postgresql://postgres@/postgres?host=${encodeURIComponent(socketDir)}&port=${port}`,
    port,
    dataDir,
    socketDir,
    binDir,
    owner: owner?.name ?? null,
    pid: 0,
  };
  writeFileSync(join(dir, "cluster.json"), JSON.stringify(cluster), { mode: 0o600 });
  cluster.pid = pgCtl(cluster, ["start"]);
  writeFileSync(join(dir, "cluster.json"), JSON.stringify(cluster), { mode: 0o600 });
  process.stdout.write(`${JSON.stringify(cluster)}\n`);
}

function restart() {
  const cluster = readCluster();
  cluster.pid = pgCtl(cluster, ["restart", "-m", "fast"]);
  writeFileSync(join(dir, "cluster.json"), JSON.stringify(cluster), { mode: 0o600 });
  process.stdout.write(`${JSON.stringify(cluster)}\n`);
}

function halt() {
  const cluster = readCluster();
  stopServer(cluster);
  process.stdout.write(`${JSON.stringify({ ...cluster, pid: 0 })}\n`);
}

function resume() {
  const cluster = readCluster();
  cluster.pid = pgCtl(cluster, ["start"]);
  writeFileSync(join(dir, "cluster.json"), JSON.stringify(cluster), { mode: 0o600 });
  process.stdout.write(`${JSON.stringify(cluster)}\n`);
}

function stop() {
  if (existsSync(join(dir, "cluster.json"))) stopServer(readCluster());
  rmSync(dir, { recursive: true, force: true });
}

/** pg_ctl stop, then the postmaster's pid (from postmaster.pid) is killed if it is somehow still there. */
function stopServer(cluster) {
  const pid = postmasterPid(cluster.dataDir);
  if (pid === undefined) return;
  const stopped = spawnSync(
    ...asServerUserArgs(cluster.owner && serverUser(), join(cluster.binDir, "pg_ctl"), [
      "stop",
      "-D",
      cluster.dataDir,
      "-m",
      "fast",
      "-w",
      "-t",
      "30",
    ]),
    { stdio: ["ignore", "inherit", "inherit"] },
  );
  if (stopped.status !== 0 && alive(pid)) {
    console.error(`postgres-test-cluster: pg_ctl stop failed; killing postmaster ${pid}`);
    process.kill(pid, "SIGKILL");
  }
  for (let tries = 0; alive(pid) && tries < 100; tries++) spawnSync("sleep", ["0.1"]);
  if (alive(pid)) throw new Error(`postmaster ${pid} is still running`);
}

function pgCtl(cluster, args) {
  asServerUser(cluster.owner && serverUser(), join(cluster.binDir, "pg_ctl"), [
    ...args,
    "-D",
    cluster.dataDir,
    "-l",
    join(dir, "server.log"),
    "-w",
    "-t",
    "60",
  ]);
  const pid = postmasterPid(cluster.dataDir);
  if (pid === undefined) throw new Error(`the server did not start; see ${join(dir, "server.log")}`);
  return pid;
}

function postmasterPid(dataDir) {
  const file = join(dataDir, "postmaster.pid");
  if (!existsSync(file)) return undefined;
  const pid = Number(readFileSync(file, "utf8").split("\n")[0]);
  return Number.isInteger(pid) && pid > 0 ? pid : undefined;
}

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === "EPERM";
  }
}

function readCluster() {
  return JSON.parse(readFileSync(join(dir, "cluster.json"), "utf8"));
}

/** As root, the `postgres` user the Debian package creates; otherwise the server runs as the caller. */
function serverUser() {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
  try {
    return { name: "postgres", uid: id("-u"), gid: id("-g") };
  } catch {
    throw new Error("running as root needs the postgres user, which Debian's postgresql package creates");
  }
}

function asServerUserArgs(owner, program, args) {
  return owner ? ["runuser", ["-u", owner.name, "--", program, ...args]] : [program, args];
}

function asServerUser(owner, program, args) {
  const [file, argv] = asServerUserArgs(owner, program, args);
  run(file, argv);
}

function run(file, args, options = {}) {
  // The child's stdout goes to our stderr: our stdout carries only the JSON.
  const result = spawnSync(file, args, { stdio: ["ignore", 2, "inherit"], ...options });
  if (result.error) throw result.error;
  if (result.status !== 0)
    throw new Error(`${file} ${args.join(" ")} failed (${result.signal ?? `exit ${result.status}`})`);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}
