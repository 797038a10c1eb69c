// Another local user's process on the port a bee run file names (uid 65534 in the tests): it reports
// every request it gets, answers a Bee-Challenge with a made-up proof (the real one needs the token)
// and anything else as the bridge would answer a retire. Node builtins only.
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";

const port = Number(process.argv[2]);
const say = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);
const hex = () => randomBytes(32).toString("hex");

const server = createServer((req, res) => {
  let body = "";
  req.on("data", (chunk) => {
    body += chunk;
  });
  req.on("end", () => {
    say({ seen: { method: req.method, url: req.url, headers: req.headers, body } });
    if ((req.headers.authorization ?? "").startsWith("Bee-Challenge ")) {
      res.writeHead(401, {
        "content-type": "application/json",
        "www-authenticate": `Bee-Proof nonce=${hex()}, proof=${hex()}`,
      });
      res.end('{"error":"answer the challenge"}');
      return;
    }
    res.writeHead(200, { "content-type": "application/json" });
    res.end(
      JSON.stringify({ status: "done", retired: "agent:alpha#00000000", current: "agent:alpha#11111111" }),
    );
  });
});
server.listen(port, "127.0.0.1", () =>
  say({ listening: server.address().port, uid: process.getuid(), pid: process.pid }),
);
