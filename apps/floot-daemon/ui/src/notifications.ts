import type { FlootMoment } from "@bridgeworks/protocol";
import { h } from "./dom.js";
import type { ChangeStream } from "./session-changes.js";

/** The one thing this page keeps about notifications: that the person turned them on (no credential). */
const settingKey = "floot.notifications";

const titles: Record<FlootMoment["kind"], string> = {
  approval: "Floot: approval needed",
  secret: "Floot: a secret is asked for",
  decision: "Floot: a call may have run; decide",
  turn_ended: "Floot: a turn ended",
};

/**
 * The browser's notifications, off until the person turns them on with the control (which asks the
 * browser's permission then, not before). While on, and while the page is hidden, each moment the
 * daemon sends on `GET /v1/changes` (an approval or secret asked, a turn ended) is one notification,
 * tagged with its request or turn. The daemon sends a moment once, when it happens, to the streams
 * open then: a reload or a daemon restart sends none again, so nothing is remembered across loads; the
 * ids this page has shown guard against the same moment twice, and the tag lets the browser replace,
 * not stack, one another tab of the same origin showed too.
 */
export class Notifications {
  readonly #changes: ChangeStream;
  readonly #shown = new Set<string>();
  readonly #controls = new Set<HTMLButtonElement>();
  #stop: (() => void) | undefined;

  constructor(changes: ChangeStream) {
    this.#changes = changes;
    if (this.#wanted() && permission() === "granted") this.#start();
  }

  /** A button that turns them on or off (a new one per page; each shows the same state). */
  control(): HTMLButtonElement {
    const button = h("button", { type: "button", class: "button notifications-toggle", id: "notifications" });
    button.addEventListener("click", () => void this.#toggle());
    this.#controls.add(button);
    this.#render(button);
    return button;
  }

  /** A page's control is gone with its page. */
  forget(button: HTMLButtonElement): void {
    this.#controls.delete(button);
  }

  async #toggle(): Promise<void> {
    if (this.#stop) {
      localStorage.removeItem(settingKey);
      this.#stop();
      this.#stop = undefined;
    } else if (permission() !== "unsupported") {
      const answer = permission() === "granted" ? "granted" : await Notification.requestPermission();
      if (answer === "granted") {
        localStorage.setItem(settingKey, "on");
        this.#start();
      }
    }
    for (const button of this.#controls) this.#render(button);
  }

  #start(): void {
    this.#stop ??= this.#changes.subscribe({ onMoment: (moment) => this.#notify(moment) });
  }

  #wanted(): boolean {
    try {
      return localStorage.getItem(settingKey) === "on";
    } catch {
      return false;
    }
  }

  #notify(moment: FlootMoment): void {
    if (document.visibilityState !== "hidden" || permission() !== "granted") return;
    const key =
      moment.kind === "turn_ended" || moment.kind === "decision"
        ? `turn:${moment.turn}`
        : `${moment.kind}:${moment.request}`;
    if (this.#shown.has(key)) return;
    this.#shown.add(key);
    const notification = new Notification(titles[moment.kind], { body: moment.summary, tag: key });
    notification.addEventListener("click", () => {
      window.focus();
      location.hash = `#/s/${encodeURIComponent(moment.session)}`;
      notification.close();
    });
  }

  #render(button: HTMLButtonElement): void {
    const state = permission();
    const on = this.#stop !== undefined;
    button.hidden = state === "unsupported";
    button.disabled = state === "denied" && !on;
    button.setAttribute("aria-pressed", String(on));
    button.textContent = on ? "Notifications on" : "Notify me";
    button.title =
      state === "denied"
        ? "The browser blocks notifications for this page: allow them in its site settings."
        : on
          ? "Notifies you while this tab is hidden: approvals, secrets, turns that end. Click to turn off."
          : "Notify me while this tab is hidden when a session needs me or a turn ends.";
  }
}

function permission(): NotificationPermission | "unsupported" {
  return typeof Notification === "undefined" ? "unsupported" : Notification.permission;
}
