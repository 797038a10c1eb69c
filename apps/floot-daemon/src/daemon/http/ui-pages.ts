import { createReadStream, existsSync, statSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import { extname, join, normalize, sep } from "node:path";
import type { UiAuth } from "../ui-auth.js";
import { ApiError, notAllowed } from "./api-error.js";
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

/** The web UI: `/login?code=…` trades a one-time code for the session cookie; the rest is static files. */
export function createUiPages({ uiAuth, guards, uiDir }: UiPagesOptions) {
  return {
    async login(request: IncomingMessage, response: ServerResponse): Promise<void> {
      if (request.method !== "GET") throw notAllowed(request.method, "/login", ["GET"]);
      const code = new URL(request.url ?? "/", "http://x").searchParams.get("code") ?? "";
      const session = /^[A-Za-z0-9_-]{1,64}$/.test(code) ? await uiAuth.redeemLoginCode(code) : undefined;
      if (session === undefined) {
        return sendPage(
          response,
          401,
          "This login link is used up or expired",
          "Run <code>floot open</code> for a fresh one.",
        );
      }
      response.writeHead(303, {
        location: "/",
        "set-cookie": `${guards.cookieName()}=${session}; HttpOnly; SameSite=Strict; Path=/`,
        ...pageHeaders,
        "cache-control": "no-store",
      });
      response.end();
    },

    /** A static file for a signed-in browser; a sign-in page for anyone else. */
    async serve(request: IncomingMessage, response: ServerResponse, path: string): Promise<void> {
      if (!(pageMethods as readonly (string | undefined)[]).includes(request.method)) {
        throw notAllowed(request.method, path, pageMethods);
      }
      if (!guards.hasUiSession(request)) {
        if (!uiDir) throw new ApiError("not_found", "the web UI is not installed");
        return sendPage(
          response,
          401,
          "Sign in with floot open",
          "Run <code>floot open</code> and follow the link it prints.",
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
