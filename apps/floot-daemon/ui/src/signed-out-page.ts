import type { SignedOutReason } from "./credential.js";
import { h, replaceChildren } from "./dom.js";

const why: Record<SignedOutReason, string> = {
  sign_in_link_used: "This sign-in link was used already: each link signs in once.",
  sign_in_link_expired: "This sign-in link expired: a link works for 60 seconds after floot open made it.",
  sign_in_link_unknown:
    "The daemon on this port did not issue this sign-in link: it is mistyped, or from before the daemon restarted.",
  sign_in_ended: "The daemon no longer knows this tab's sign-in: it expired (after 14 days) or was revoked.",
  no_sign_in: "This tab is not signed in, and no open tab of this page could sign it in.",
  no_answer: "The daemon did not answer the sign-in link: is it running?",
};

/**
 * What a signed-out tab shows instead of a page it cannot use: why it is signed out and how to get a
 * fresh link. A link opened in this tab signs it in where it is (see main.ts).
 */
export function renderSignedOut(root: HTMLElement, reason: SignedOutReason): void {
  replaceChildren(
    root,
    h(
      "section",
      { class: "signed-out", "data-reason": reason },
      h("h1", { tabindex: "-1" }, "Signed out"),
      h("p", { class: "signed-out-why" }, why[reason]),
      h(
        "p",
        {},
        "For a fresh link, run ",
        h("code", {}, "floot open"),
        " on the machine the daemon runs on: it opens the link in your browser (",
        h("code", {}, "--no-browser"),
        " prints it instead). Opened here, the link signs this tab in; other tabs of this page then sign in from it.",
      ),
    ),
  );
  document.title = "Floot · signed out";
}
