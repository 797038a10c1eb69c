import { Connection } from "./connection.js";
import { signInFromFragment } from "./credential.js";
import { SessionPage } from "./session-page.js";
import { SessionsPage } from "./sessions-page.js";

const main = document.getElementById("main")!;
const connection = new Connection(document.getElementById("connection")!, document.getElementById("banner")!);
let page: { dispose(): void } | undefined;

// Routes live in the hash so the daemon serves one static page: `#/` lists, `#/s/<id>` is a session.
function route(): void {
  page?.dispose();
  const match = /^#\/s\/([^/]+)$/.exec(location.hash);
  page = match
    ? new SessionPage(main, decodeURIComponent(match[1]!), connection)
    : new SessionsPage(main, connection);
  main.querySelector<HTMLElement>("h1")?.focus({ preventScroll: true });
}

// A sign-in link (`#login=<code>`) is traded for this tab's credential before any page asks the API.
void signInFromFragment()
  .catch(() => connection.signedOut())
  .finally(() => {
    window.addEventListener("hashchange", route);
    route();
  });
