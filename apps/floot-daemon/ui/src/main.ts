import { Connection } from "./connection.js";
import { signInFromFragment } from "./credential.js";
import { Notifications } from "./notifications.js";
import { ChangeStream } from "./session-changes.js";
import { SessionPage } from "./session-page.js";
import { SessionsPage } from "./sessions-page.js";

const main = document.getElementById("main")!;
const connection = new Connection(document.getElementById("connection")!, document.getElementById("banner")!);
// One change stream per tab, shared by the sessions list and the notifications (on every page).
const changes = new ChangeStream(connection);
let page: { dispose(): void } | undefined;

// Routes live in the hash so the daemon serves one static page: `#/` lists, `#/s/<id>` is a session.
function route(notifications: Notifications): void {
  page?.dispose();
  const match = /^#\/s\/([^/]+)$/.exec(location.hash);
  page = match
    ? new SessionPage(main, decodeURIComponent(match[1]!), connection)
    : new SessionsPage(main, connection, { changes, notifications });
  main.querySelector<HTMLElement>("h1")?.focus({ preventScroll: true });
}

// A sign-in link (`#login=<code>`) is traded for this tab's credential before any page asks the API.
void signInFromFragment()
  .catch(() => connection.signedOut())
  .finally(() => {
    // Made once signed in: notifications turned on earlier start their stream now.
    const notifications = new Notifications(changes);
    window.addEventListener("hashchange", () => route(notifications));
    route(notifications);
  });
