import type { IncomingMessage } from "node:http";
import { tokenMatcher } from "@bridgeworks/control-channel";
import type { UiAuth } from "../ui-auth.js";
import { ApiError } from "./api-error.js";

/** Why a `localhost` request is refused, and the address to use instead (`http://127.0.0.1:<port>/`). */
export interface LocalhostRefusal {
  message: string;
  address: string;
}

/** Who is asking: a holder of the API token, or the web UI's page with an access token for its origin. */
export type Caller = { kind: "token" } | { kind: "page"; signIn: string; origin: string };

export interface Guards {
  /**
   * Why `Host: localhost:<port>` is not served here (another process holds `[::1]:<port>`, or there is
   * no IPv6 loopback to hold), naming the 127.0.0.1 address instead; undefined for any other request.
   */
  localhostRefusal(request: IncomingMessage): LocalhostRefusal | undefined;
  /** Host must name this listener; an Origin, when sent, must be the daemon's own. Every request. */
  checkHostAndOrigin(request: IncomingMessage): void;
  /** The API's caller, from `Authorization: Bearer`, or a 401. Nothing ambient (no cookie) counts. */
  apiCaller(request: IncomingMessage): Caller;
  /** The origin a (Host-checked) request names: what a page's sign-in and access are bound to. */
  originOf(request: IncomingMessage): string;
}

export interface GuardOptions {
  token: string;
  uiAuth: UiAuth;
  port: () => number;
  /** Why `localhost` is not served (see `Guards.localhostRefusal`); undefined while this daemon holds `[::1]`. */
  localhostDown: () => string | undefined;
}

export function createGuards(options: GuardOptions): Guards {
  const hosts = () => {
    const port = options.port();
    return options.localhostDown() === undefined
      ? [`127.0.0.1:${port}`, `localhost:${port}`]
      : [`127.0.0.1:${port}`];
  };
  const originOf = (request: IncomingMessage) => `http://${request.headers.host}`;
  const isApiToken = tokenMatcher(options.token);

  return {
    originOf,
    localhostRefusal(request) {
      const port = options.port();
      const down = options.localhostDown();
      if (down === undefined || request.headers.host !== `localhost:${port}`) return undefined;
      const address = `http://127.0.0.1:${port}/`;
      return {
        message: `http://localhost:${port} is not served: ${down}. Open ${address} instead (floot open prints that link).`,
        address,
      };
    },
    checkHostAndOrigin(request) {
      const own = hosts();
      if (!own.includes(request.headers.host ?? "")) {
        throw new ApiError("forbidden", "Host must name this daemon's own address");
      }
      const origin = request.headers.origin;
      if (origin !== undefined && !own.some((host) => origin === `http://${host}`)) {
        throw new ApiError("forbidden", "cross-origin requests are refused");
      }
    },
    apiCaller(request) {
      const bearer = /^Bearer ([^\s]+)$/.exec(request.headers.authorization ?? "")?.[1];
      if (bearer !== undefined) {
        // Both compared whatever the first says, so timing does not tell which kind a token is.
        const apiToken = isApiToken(bearer);
        const origin = originOf(request);
        const signIn = options.uiAuth.signInOf(bearer, origin);
        if (apiToken) return { kind: "token" };
        if (signIn !== undefined) return { kind: "page", signIn, origin };
      }
      throw new ApiError("unauthorized", "a valid Authorization: Bearer token is required");
    },
  };
}
