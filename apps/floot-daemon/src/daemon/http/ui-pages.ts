import { createReadStream, existsSync, statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname, join, normalize, sep } from "node:path";
import {
  UiAccessRequest,
  UiChallengeRequest,
  type UiIdentityProof,
  UiIdentityRequest,
  type UiSignInRefusal,
  UiSignInRequest,
} from "@bridgeworks/protocol";
import { sendJson } from "@bridgeworks/runtime";
import { publicKeyOf, type UiAuth } from "../ui-auth.js";
import { ApiError, notAllowed } from "./api-error.js";
import { readBody } from "./body.js";
import type { Guards, LocalhostRefusal } from "./guards.js";
import { decodePathPart } from "./path-decoding.js";

const pageMethods = ["GET", "HEAD"] as const;

/** What a refused sign-in link's error says, by why it was refused. */
const signInRefusals: Record<UiSignInRefusal, string> = {
  sign_in_link_used: "this sign-in link was used already (each link signs in once)",
  sign_in_link_expired: "this sign-in link expired (a link is valid for 60 seconds)",
  sign_in_link_unknown: "this daemon did not issue this sign-in link (mistyped, or from before a restart)",
};

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
 * credential lives in the page. `POST /ui/sign-in` trades the sign-in link's one-time code and the page's
 * public key for a token bound to the page's origin; `POST /ui/identity` answers the page's challenge
 * before it sends the token; `POST /ui/challenge` gives the token a nonce to sign and `POST /ui/access`
 * trades the signature for the access token `/v1` takes.
 */
export function createUiPages({ uiAuth, guards, uiDir }: UiPagesOptions) {
  return {
    async signIn(request: IncomingMessage, response: ServerResponse): Promise<void> {
      if (request.method !== "POST") throw notAllowed(request.method, "/ui/sign-in", ["POST"]);
      const { code, publicKey } = await readBody(request, UiSignInRequest);
      if (publicKeyOf(publicKey) === undefined) {
        throw new ApiError("invalid_body", "publicKey: not a point of P-256", { field: "publicKey" });
      }
      const credential = await uiAuth.redeemLoginCode(code, guards.originOf(request), publicKey);
      if (credential === undefined) {
        const refusal = uiAuth.loginCodeRefusal(code);
        throw new ApiError(refusal, `${signInRefusals[refusal]}: run floot open for a fresh one`);
      }
      sendJson(response, 201, credential);
    },

    async identity(request: IncomingMessage, response: ServerResponse): Promise<void> {
      if (request.method !== "POST") throw notAllowed(request.method, "/ui/identity", ["POST"]);
      const { sessionId, nonce } = await readBody(request, UiIdentityRequest);
      const answer: UiIdentityProof = { proof: uiAuth.prove(sessionId, guards.originOf(request), nonce) };
      sendJson(response, 200, answer);
    },

    async challenge(request: IncomingMessage, response: ServerResponse): Promise<void> {
      if (request.method !== "POST") throw notAllowed(request.method, "/ui/challenge", ["POST"]);
      const { token } = await readBody(request, UiChallengeRequest);
      const challenge = uiAuth.challenge(token, guards.originOf(request));
      if (challenge === undefined) throw signedOut();
      sendJson(response, 200, challenge);
    },

    async access(request: IncomingMessage, response: ServerResponse): Promise<void> {
      if (request.method !== "POST") throw notAllowed(request.method, "/ui/access", ["POST"]);
      const { token, nonce, signature } = await readBody(request, UiAccessRequest);
      const access = uiAuth.grantAccess(token, guards.originOf(request), nonce, signature);
      if (access === undefined) {
        throw new ApiError(
          "unauthorized",
          "the signature does not answer a live challenge of this sign-in: ask for a new challenge",
        );
      }
      sendJson(response, 201, access);
    },

    /**
     * A request named for `localhost` while it is not served: an API or sign-in call gets a 403 saying
     * why; a page, the same as a page naming the 127.0.0.1 address.
     */
    refuse(response: ServerResponse, path: string, refusal: LocalhostRefusal): void {
      if (path.startsWith("/v1/") || path.startsWith("/ui/"))
        throw new ApiError("forbidden", refusal.message);
      const [before = "", after = ""] = refusal.message.split(refusal.address);
      const link = `<a href="${refusal.address}">${refusal.address}</a>`;
      sendPage(response, 403, "Use 127.0.0.1", `${escapeHtml(before)}${link}${escapeHtml(after)}`);
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

function signedOut(): ApiError {
  return new ApiError(
    "unauthorized",
    "this page's sign-in is unknown here, expired or revoked: run floot open for a fresh sign-in link",
  );
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

function escapeHtml(text: string): string {
  return text.replace(/[&<>"]/g, (char) => `&#${char.charCodeAt(0)};`);
}
