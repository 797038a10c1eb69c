// Another local user's process on the port a bee run file names (uid 65534 in the tests). It prints
// one JSON line per request it gets (method, path, headers), answers a Bee-Challenge with a made-up
// proof (the real one needs the token), and anything else as the bridge answers a done retire.
// Node builtins only.
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";

const report = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
const madeUp = () => randomBytes(32).toString("hex");
const retired = { status: "done", retired: "agent:alpha#00000000", current: "agent:alpha#11111111" };

const server = createServer((request, response) => {
  const { method, url, headers } = request;
  report({ seen: { method, url, headers } });
  request.resume();
  if (headers.authorization?.startsWith("Bee-Challenge ")) {
    response.writeHead(401, {
      "content-type": "application/json",
      "www-authenticate": `Bee-Proof nonce=${madeUp()}, proof=${madeUp()}`,
    });
    response.end('{"error":"answer the challenge"}');
  } else {
    response.writeHead(200, { "content-type": "application/json" });
    response.end(JSON.stringify(retired));
  }
});
server.listen(Number(process.argv[2]), "127.0.0.1", () =>
  report({ listening: server.address().port, uid: process.getuid(), pid: process.pid }),
);
