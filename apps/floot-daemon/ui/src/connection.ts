import type { FlootDaemonStatus } from "@bridgeworks/protocol";
import { api } from "./api.js";
import type { SignedOutReason } from "./credential.js";
import { h, replaceChildren } from "./dom.js";

export type ConnectionKind = "connecting" | "online" | "offline" | "signed-out";

interface ConnectionState {
  kind: ConnectionKind;
  attempt: number;
  generation?: number;
  /** Set once the page saw a second generation: the daemon restarted under it. */
  restartedTo?: number;
}

/**
 * The page's view of the daemon: shown in the app bar at all times, and as a banner while the daemon is
 * away or has just come back as a new generation. Signed out, the page itself says why and what to do
 * (`onSignedOut`).
 */
export class Connection {
  #state: ConnectionState = { kind: "connecting", attempt: 0 };
  #indicator: HTMLElement;
  #banner: HTMLElement;
  #restartNoticeTimer: ReturnType<typeof setTimeout> | undefined;
  readonly #onSignedOut: (reason: SignedOutReason) => void;

  constructor(indicator: HTMLElement, banner: HTMLElement, onSignedOut: (reason: SignedOutReason) => void) {
    this.#indicator = indicator;
    this.#banner = banner;
    this.#onSignedOut = onSignedOut;
    this.#render();
  }

  get kind(): ConnectionKind {
    return this.#state.kind;
  }

  /** The daemon answered. After an outage, asks which generation it is now. */
  async online(): Promise<void> {
    const wasAway = this.#state.kind !== "online";
    if (wasAway || this.#state.generation === undefined) {
      const status = await api<FlootDaemonStatus>("GET", "/v1/status");
      this.noteGeneration(status.generation);
    }
    if (this.#state.kind === "online" && !wasAway) return;
    this.#state = { ...this.#state, kind: "online", attempt: 0 };
    this.#render();
  }

  noteGeneration(generation: number): void {
    const previous = this.#state.generation;
    this.#state.generation = generation;
    if (previous !== undefined && previous !== generation) {
      this.#state.restartedTo = generation;
      clearTimeout(this.#restartNoticeTimer);
      this.#restartNoticeTimer = setTimeout(() => {
        this.#state.restartedTo = undefined;
        this.#render();
      }, 8_000);
    }
    this.#render();
  }

  offline(attempt: number): void {
    this.#state = { ...this.#state, kind: "offline", attempt };
    this.#render();
  }

  /** The daemon refused this tab's sign-in (by default), or there is none: the page says which. */
  signedOut(reason: SignedOutReason = "sign_in_ended"): void {
    this.#state = { ...this.#state, kind: "signed-out" };
    this.#render();
    this.#onSignedOut(reason);
  }

  #render(): void {
    const { kind, attempt, generation, restartedTo } = this.#state;
    document.body.dataset.connection = kind;
    const label = {
      connecting: "Connecting…",
      online: "Connected",
      offline: "Reconnecting…",
      "signed-out": "Signed out",
    }[kind];
    this.#indicator.className = `connection connection-${kind}`;
    replaceChildren(
      this.#indicator,
      h("span", { class: "dot", "aria-hidden": "true" }),
      label,
      generation !== undefined && kind === "online"
        ? h(
            "span",
            { class: "generation", title: "daemon generation (bumped at every start)" },
            ` · gen ${generation}`,
          )
        : null,
    );
    if (kind === "offline") {
      this.#banner.hidden = false;
      this.#banner.className = "banner banner-warn";
      replaceChildren(
        this.#banner,
        h("span", { class: "spinner", "aria-hidden": "true" }),
        h("strong", {}, "The daemon is not answering. "),
        `Reconnecting${attempt > 0 ? ` (attempt ${attempt + 1})` : ""}… Nothing is lost: the page picks up where it left off.`,
      );
    } else if (kind === "online" && restartedTo !== undefined) {
      this.#banner.hidden = false;
      this.#banner.className = "banner banner-info";
      replaceChildren(
        this.#banner,
        h("strong", {}, "Reconnected. "),
        `The daemon restarted (generation ${restartedTo}); turns it could not finish are marked interrupted.`,
      );
    } else {
      this.#banner.hidden = true;
      replaceChildren(this.#banner);
    }
  }
}

export function backoffMs(attempt: number): number {
  return Math.min(4_000, 250 * 2 ** attempt);
}

export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
