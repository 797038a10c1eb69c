import type { FlootDaemonStatus, FlootStartTurns } from "@bridgeworks/protocol";
import { api } from "./api.js";
import type { SignedOutReason } from "./credential.js";
import { h, replaceChildren } from "./dom.js";

export type ConnectionKind = "connecting" | "online" | "offline" | "signed-out";

interface ConnectionState {
  kind: ConnectionKind;
  attempt: number;
  generation?: number;
  /** When the page last lost the daemon (ms since the epoch): the restart banner says how long. */
  awaySince?: number;
  /** Set once the page saw a second generation: the daemon restarted under it. */
  restarted?: { generation: number; awayMs?: number; turns: FlootStartTurns };
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
      this.noteStatus(await api<FlootDaemonStatus>("GET", "/v1/status"));
    }
    if (this.#state.kind === "online" && !wasAway) return;
    this.#state = { ...this.#state, kind: "online", attempt: 0, awaySince: undefined };
    this.#render();
  }

  noteStatus(status: FlootDaemonStatus): void {
    const previous = this.#state.generation;
    this.#state.generation = status.generation;
    if (previous !== undefined && previous !== status.generation) {
      const { awaySince } = this.#state;
      this.#state.restarted = {
        generation: status.generation,
        ...(awaySince !== undefined && { awayMs: Date.now() - awaySince }),
        turns: status.atStart,
      };
      clearTimeout(this.#restartNoticeTimer);
      // Long enough to read on a phone; the app bar keeps the generation.
      this.#restartNoticeTimer = setTimeout(() => {
        this.#state.restarted = undefined;
        this.#render();
      }, 15_000);
    }
    this.#render();
  }

  offline(attempt: number): void {
    this.#state = {
      ...this.#state,
      kind: "offline",
      attempt,
      awaySince: this.#state.awaySince ?? Date.now(),
    };
    this.#render();
  }

  /** The daemon refused this tab's sign-in (by default), or there is none: the page says which. */
  signedOut(reason: SignedOutReason = "sign_in_ended"): void {
    this.#state = { ...this.#state, kind: "signed-out" };
    this.#render();
    this.#onSignedOut(reason);
  }

  #render(): void {
    const { kind, attempt, generation, restarted } = this.#state;
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
    } else if (kind === "online" && restarted !== undefined) {
      this.#banner.hidden = false;
      this.#banner.className = "banner banner-info";
      replaceChildren(this.#banner, h("strong", {}, "Reconnected. "), restartNotice(restarted));
    } else {
      this.#banner.hidden = true;
      replaceChildren(this.#banner);
    }
  }
}

/** "The daemon restarted after 4 s (generation 7): 2 turns kept running; 1 turn interrupted." */
export function restartNotice(restarted: NonNullable<ConnectionState["restarted"]>): string {
  const { generation, awayMs, turns } = restarted;
  const after = awayMs === undefined ? "" : ` after ${Math.max(1, Math.round(awayMs / 1000))} s`;
  const told = [
    turns.keptRunning > 0 && `${plural(turns.keptRunning, "turn")} kept running`,
    turns.replayed > 0 && `${plural(turns.replayed, "turn")} started again (nothing had run yet)`,
    turns.continued > 0 && `${plural(turns.continued, "turn")} carried on (every call had finished)`,
    turns.waitingOnYou > 0 && `${plural(turns.waitingOnYou, "turn")} waiting on you (a call may have run)`,
    turns.interrupted > 0 &&
      `${plural(turns.interrupted, "turn")} interrupted (its CLI was gone; Retry is on it)`,
  ].filter((part): part is string => part !== false);
  const found = told.length > 0 ? told.join("; ") : "no turn was running";
  return `The daemon restarted${after} (generation ${generation}): ${found}.`;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
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
