import type { IncomingMessage } from "node:http";
import { tokenMatcher } from "@bridgeworks/control-channel";
import type { UiAuth } from "../ui-auth.js";
import { ApiError } from "./api-error.js";

/** Who is asking: a holder of the API token, or the web UI's page with its origin-bound token. */
export type Caller = { kind: "token" } | { kind: "page"; signIn: string; origin: string };

export interface Guards {
  /** Host must name this listener; an Origin, when sent, must be the daemon's own. Every request. */
  checkHostAndOrigin(request: IncomingMessage): void;
  /** The API's caller, from `Authorization: Bearer`, or a 401. Nothing ambient (no cookie) counts. */
  apiCaller(request: IncomingMessage): Caller;
  /** The origin a (Host-checked) request names: what a page's token is bound to. */
  originOf(request: IncomingMessage): string;
}

export function createGuards(options: { token: string; uiAuth: UiAuth; port: () => number }): Guards {
  const ownOrigins = () => [`http://127.0.0.1:${options.port()}`, `http://localhost:${options.port()}`];
  const originOf = (request: IncomingMessage) => `http://${request.headers.host}`;
  const isApiToken = tokenMatcher(options.token);

  return {
    originOf,
    checkHostAndOrigin(request) {
      const port = options.port();
      const host = request.headers.host;
      if (host !== `127.0.0.1:${port}` && host !== `localhost:${port}`) {
        throw new ApiError("forbidden", "Host must name this daemon's own address");
      }
      const origin = request.headers.origin;
      if (origin !== undefined && !ownOrigins().includes(origin)) {
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
