import type { IncomingMessage } from "node:http";
import { tokensEqual } from "@bridgeworks/control-channel";
import type { UiAuth } from "../ui-auth.js";
import { ApiError } from "./api-error.js";

/** Who is asking: a holder of the API token, or the web UI's page with its session cookie. */
export type Caller = "token" | "cookie";

export interface Guards {
  /** Host must name this listener; an Origin, when sent, must be the daemon's own. Every request. */
  checkHostAndOrigin(request: IncomingMessage): void;
  /** The API's caller, or a 401; a cookie caller must also come from the UI's own page (403). */
  apiCaller(request: IncomingMessage): Caller;
  hasUiSession(request: IncomingMessage): boolean;
  /** `floot_session_<port>`: cookies are shared by every port of a host, so each daemon names its own. */
  cookieName(): string;
}

export function createGuards(options: { token: string; uiAuth: UiAuth; port: () => number }): Guards {
  const ownOrigins = () => [`http://127.0.0.1:${options.port()}`, `http://localhost:${options.port()}`];
  const cookieName = () => `floot_session_${options.port()}`;
  const hasUiSession = (request: IncomingMessage) =>
    options.uiAuth.isSession(readCookie(request.headers.cookie, cookieName()));

  const callerOf = (request: IncomingMessage): Caller | undefined => {
    const bearer = /^Bearer ([^\s]+)$/.exec(request.headers.authorization ?? "");
    if (bearer !== null) return tokensEqual(bearer[1]!, options.token) ? "token" : undefined;
    return hasUiSession(request) ? "cookie" : undefined;
  };

  return {
    cookieName,
    hasUiSession,
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
      const caller = callerOf(request);
      if (caller === undefined)
        throw new ApiError("unauthorized", "a valid Authorization: Bearer token is required");
      if (caller === "cookie" && !sameOriginForCookie(request, ownOrigins())) {
        throw new ApiError("forbidden", "a cookie-authenticated change must come from the web UI's own page");
      }
      return caller;
    },
  };
}

/** A cookie-authenticated request must come from the UI's own page: state changes carry proof of it. */
function sameOriginForCookie(request: IncomingMessage, ownOrigins: string[]): boolean {
  const site = request.headers["sec-fetch-site"];
  if (site !== undefined && site !== "same-origin" && site !== "none") return false;
  if (request.method === "GET" || request.method === "HEAD") return true;
  const origin = request.headers.origin;
  return (origin !== undefined && ownOrigins.includes(origin)) || site === "same-origin";
}

function readCookie(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? "").split(";")) {
    const at = part.indexOf("=");
    if (at !== -1 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}
