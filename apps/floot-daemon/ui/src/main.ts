import { Connection } from "./connection.js";
import { hasSignIn, NotSignedIn, type SignedOutReason, signInWithCode, takeLoginCode } from "./credential.js";
import { Notifications } from "./notifications.js";
import { ChangeStream } from "./session-changes.js";
import { SessionPage } from "./session-page.js";
import { SessionsPage } from "./sessions-page.js";
import { renderSignedOut } from "./signed-out-page.js";
import { answerNewTabs, signInFromOpenTab } from "./tab-sign-in.js";

const main = document.getElementById("main")!;
const connection = new Connection(
  document.getElementById("connection")!,
  document.getElementById("banner")!,
  showSignedOut,
);
// One change stream per tab, shared by the sessions list and the notifications (on every page).
const changes = new ChangeStream(connection);
/** Made at the first sign-in: notifications turned on earlier start their stream then. */
let notifications: Notifications | undefined;
let page: { dispose(): void } | undefined;
let signedOut = false;
let signingIn: Promise<void> | undefined;

// Routes live in the hash so the daemon serves one static page: `#/` lists, `#/s/<id>` is a session.
function route(): void {
  page?.dispose();
  notifications ??= new Notifications(changes);
  const match = /^#\/s\/([^/]+)$/.exec(location.hash);
  page = match
    ? new SessionPage(main, decodeURIComponent(match[1]!), connection)
    : new SessionsPage(main, connection, { changes, notifications });
  main.querySelector<HTMLElement>("h1")?.focus({ preventScroll: true });
}

function showSignedOut(reason: SignedOutReason): void {
  signedOut = true;
  page?.dispose();
  page = undefined;
  renderSignedOut(main, reason);
}

/** This tab's sign-in: a link's code first, else the one it holds, else one an open tab shares. */
async function signIn(code: string | undefined): Promise<SignedOutReason | undefined> {
  let refused: SignedOutReason | undefined;
  if (code !== undefined) {
    try {
      await signInWithCode(code);
      return undefined;
    } catch (error) {
      refused = error instanceof NotSignedIn ? error.reason : "no_answer";
    }
  }
  if (hasSignIn() && !signedOut) return undefined;
  if (await signInFromOpenTab()) return undefined;
  return refused ?? (hasSignIn() ? "sign_in_ended" : "no_sign_in");
}

function start(code: string | undefined): Promise<void> {
  signingIn = signIn(code).then((reason) => {
    signingIn = undefined;
    if (reason !== undefined) return connection.signedOut(reason);
    signedOut = false;
    route();
  });
  return signingIn;
}

// A sign-in link (`#login=<code>`) is traded for this tab's credential before any page asks the API,
// whether the tab loads with it or is already open (signed out or not) when it is opened here.
window.addEventListener("hashchange", () => {
  const code = takeLoginCode();
  if (code !== undefined) void start(code);
  else if (!signedOut && signingIn === undefined) route();
});
// A signed-out tab shown again tries the open tabs again (one may have signed in meanwhile).
document.addEventListener("visibilitychange", () => {
  if (document.visibilityState === "visible" && signedOut && signingIn === undefined) void start(undefined);
});
answerNewTabs();
void start(takeLoginCode());
