import type {
  FlootPermissionRequestList,
  FlootSecretRequestList,
  PermissionRequest,
  SecretRequest,
} from "@bridgeworks/protocol";
import { api } from "./api.js";
import type { TurnView } from "./turn-view.js";

/**
 * What of one session waits on a human: its open secret and permission requests, read from the
 * daemon's open lists and handed to every turn view (whose cards show them). Refreshes asked for while
 * one runs are coalesced into one more.
 */
export class OpenRequests {
  readonly #sessionId: string;
  readonly #views: () => Iterable<TurnView>;
  readonly #onWaiting: (waiting: boolean) => void;
  #running: Promise<void> | undefined;
  #again = false;

  /** `onWaiting`: told after each refresh whether any request of the session is open. */
  constructor(sessionId: string, views: () => Iterable<TurnView>, onWaiting: (waiting: boolean) => void) {
    this.#sessionId = sessionId;
    this.#views = views;
    this.#onWaiting = onWaiting;
  }

  /** Reads both open lists and applies them; throws when the daemon does not answer. */
  async refresh(): Promise<void> {
    const [secrets, permissions] = await Promise.all([
      api<FlootSecretRequestList>("GET", "/v1/secret-requests"),
      api<FlootPermissionRequestList>("GET", "/v1/permission-requests"),
    ]);
    this.#apply(secrets.requests, permissions.requests);
  }

  /** A refresh soon; failures are left to the page's next sync. */
  soon(): void {
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.refresh()
      .catch(() => undefined)
      .finally(() => {
        this.#running = undefined;
        if (!this.#again) return;
        this.#again = false;
        this.soon();
      });
  }

  #apply(secrets: readonly SecretRequest[], permissions: readonly PermissionRequest[]): void {
    const ofSession = <T extends { sessionId: string; id: string }>(requests: readonly T[]) =>
      new Map(requests.filter((r) => r.sessionId === this.#sessionId).map((r) => [r.id, r]));
    const openSecrets = ofSession(secrets);
    const openPermissions = ofSession(permissions);
    for (const view of this.#views()) {
      view.setOpenSecrets(openSecrets);
      view.setOpenPermissions(openPermissions);
    }
    this.#onWaiting(openSecrets.size + openPermissions.size > 0);
  }
}
