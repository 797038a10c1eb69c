// Run as another local user (uid 65534) against a victim's CLI keeper: connect to its socket, read its
// key, list and read its spools, and take the socket's name. Says what happened to each. Builtins only.
import { readdirSync, readFileSync } from "node:fs";
import { connect, createServer } from "node:net";

const [socketPath, keyPath, spoolDir, ...spools] = process.argv.slice(2);
const outcome = (action) => {
  try {
    action();
    return "done";
  } catch (error) {
    return error.code ?? String(error);
  }
};
const connected = await new Promise((resolve) => {
  const socket = connect(socketPath);
  socket.on("connect", () => {
    socket.destroy();
    resolve("connected");
  });
  socket.on("error", (error) => resolve(error.code));
});
const squatted = await new Promise((resolve) => {
  const server = createServer();
  server.on("error", (error) => resolve(error.code));
  server.listen(`${socketPath}.squat`, () => {
    server.close();
    resolve("listening");
  });
});
const results = {
  uid: process.getuid(),
  connect: connected,
  readKey: outcome(() => readFileSync(keyPath)),
  listSpools: outcome(() => readdirSync(spoolDir)),
  readSpools: spools.map((path) => outcome(() => readFileSync(path))),
  squat: squatted,
};
process.stdout.write(`${JSON.stringify(results)}\n`);
