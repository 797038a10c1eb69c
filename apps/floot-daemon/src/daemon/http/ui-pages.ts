import { createReadStream, existsSync, statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname, join, normalize, sep } from "node:path";
import { type UiIdentityProof, UiIdentityRequest, UiSignInRequest } from "@bridgeworks/protocol";
import { sendJson } from "@bridgeworks/runtime";
import type { UiAuth } from "../ui-auth.js";
import { ApiError, notAllowed } from "./api-error.js";
import { readBody } from "./body.js";
import type { Guards } from "./guards.js";
import { decodePathPart } from "./path-decoding.js";

const pageMethods = ["GET", "HEAD"] as const;

// The page runs only its own script and style, talks only to this daemon, and is never framed.
const pageHeaders = {
  "cache-control": "no-cache",
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; " +
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
  "referrer-policy": "no-referrer",
  "x-content-type-options": "nosniff",
  "x-frame-options": "DENY",
};

const contentTypes: Record<string, string> = {
  ".html": "text/html; charset=utf-8",
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
  ".json": "application/json",
  ".png": "image/png",
  ".ico": "image/x-icon",
};

export interface UiPagesOptions {
  uiAuth: UiAuth;
  guards: Guards;
  /** The web UI's static files; absent when not installed. */
  uiDir: string | undefined;
}

/**
 * The web UI. Its static files hold no secret and are served to anyone who passes the Host check; the
 * credential lives in the page. `POST /ui/sign-in` trades the sign-in link's one-time code for a token
 * bound to the page's origin; `POST /ui/identity` answers the page's challenge before it sends the token.
 */
export function createUiPages({ uiAuth, guards, uiDir }: UiPagesOptions) {
  return {
    async signIn(request: IncomingMessage, response: ServerResponse): Promise<void> {
      if (request.method !== "POST") throw notAllowed(request.method, "/ui/sign-in", ["POST"]);
      const { code } = await readBody(request, UiSignInRequest);
      const credential = await uiAuth.redeemLoginCode(code, guards.originOf(request));
      if (credential === undefined) {
        throw new ApiError(
          "unauthorized",
          "this sign-in link is used up or expired: run floot open for a fresh one",
        );
      }
      sendJson(response, 201, credential);
    },

    async identity(request: IncomingMessage, response: ServerResponse): Promise<void> {
      if (request.method !== "POST") throw notAllowed(request.method, "/ui/identity", ["POST"]);
      const { sessionId, nonce } = await readBody(request, UiIdentityRequest);
      const answer: UiIdentityProof = { proof: uiAuth.prove(sessionId, guards.originOf(request), nonce) };
      sendJson(response, 200, answer);
    },

    async serve(request: IncomingMessage, response: ServerResponse, path: string): Promise<void> {
      if (!(pageMethods as readonly (string | undefined)[]).includes(request.method)) {
        throw notAllowed(request.method, path, pageMethods);
      }
      if (path === "/login") {
        return sendPage(
          response,
          410,
          "Sign in with floot open",
          "Run <code>floot open</code> for a sign-in link.",
        );
      }
      const relative =
        path === "/" ? "index.html" : normalize(decodePathPart(path, path)).replace(/^[/\\]+/, "");
      const file = uiDir ? join(uiDir, relative) : undefined;
      if (!uiDir || !file?.startsWith(uiDir + sep) || !existsSync(file) || !statSync(file).isFile()) {
        throw new ApiError("not_found", uiDir ? `no file ${path}` : "the web UI is not installed");
      }
      response.writeHead(200, {
        "content-type": contentTypes[extname(file)] ?? "application/octet-stream",
        ...pageHeaders,
      });
      if (request.method === "HEAD") return void response.end();
      createReadStream(file).pipe(response);
    },
  };
}

function sendPage(response: ServerResponse, status: number, title: string, html: string): void {
  const text = `<!doctype html><html lang="en"><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1"><title>Floot</title><h1>${title}</h1><p>${html}</p></html>\n`;
  response.writeHead(status, {
    "content-type": "text/html; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    ...pageHeaders,
    "cache-control": "no-store",
  });
  response.end(text);
}
