import { adoptSignIn, hasSignIn, signInToShare } from "./credential.js";

// A new tab of the origin (a Ctrl+click on a session, a typed address) has an empty sessionStorage. It
// asks the origin's open tabs over a BroadcastChannel, which reaches only this origin's pages in this
// browser profile: no other port, site or user. A signed-in tab says it is there at once, then answers
// with its sign-in only once the process on the port proved, just now, that it is the daemon
// (`signInToShare`), so while another process holds the port nothing is answered. Nothing is written to
// persistent storage: the new tab keeps the sign-in in its own sessionStorage, the keys stay in IndexedDB.

const channelName = "floot-sign-in";
/** How long a new tab waits for any signed-in tab to say it is there. */
const presenceWaitMs = 600;
/** How long it then waits for an answer (the answering tab asks the daemon for a proof first). */
const answerWaitMs = 10_000;

type Message =
  | { type: "ask"; id: string }
  | { type: "here"; id: string }
  | { type: "answer"; id: string; signIn: unknown }
  | { type: "decline"; id: string };

/** Answers the sign-in requests of new tabs for as long as this page is open. */
export function answerNewTabs(): void {
  if (typeof BroadcastChannel === "undefined") return;
  const channel = new BroadcastChannel(channelName);
  channel.addEventListener("message", (event: MessageEvent<Message>) => {
    const message = event.data;
    if (message?.type !== "ask" || typeof message.id !== "string" || !hasSignIn()) return;
    const { id } = message;
    channel.postMessage({ type: "here", id } satisfies Message);
    void signInToShare().then((signIn) =>
      channel.postMessage(
        signIn === undefined ? ({ type: "decline", id } satisfies Message) : { type: "answer", id, signIn },
      ),
    );
  });
}

/** Asks the open tabs for their sign-in and takes the first that holds; false when none gave one. */
export async function signInFromOpenTab(): Promise<boolean> {
  if (typeof BroadcastChannel === "undefined") return false;
  const channel = new BroadcastChannel(channelName);
  const id = crypto.randomUUID();
  let settled = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    return await new Promise<boolean>((resolve) => {
      const settle = (signedIn: boolean) => {
        settled = true;
        resolve(signedIn);
      };
      let present = 0;
      let declined = 0;
      timer = setTimeout(() => settle(false), presenceWaitMs);
      channel.addEventListener("message", (event: MessageEvent<Message>) => {
        const message = event.data;
        if (settled || message?.id !== id) return;
        if (message.type === "here" && present++ === 0) {
          clearTimeout(timer);
          timer = setTimeout(() => settle(false), answerWaitMs);
        } else if (message.type === "decline" && ++declined >= present) {
          settle(false);
        } else if (message.type === "answer") {
          void adoptSignIn(message.signIn, () => !settled).then((adopted) => adopted && settle(true));
        }
      });
      channel.postMessage({ type: "ask", id } satisfies Message);
    });
  } finally {
    clearTimeout(timer);
    channel.close();
  }
}
