import { randomBytes } from "node:crypto";
import { readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { signInPagesDirName } from "../daemon/runtime-dir.js";
import { ensurePrivateDir } from "../private-dir.js";

/** Redirect files older than this are swept: their one-time codes are long expired. */
const staleAfterMs = 10 * 60_000;

/**
 * The sign-in link for a browser, as Jupyter does it: a 0600 HTML file that redirects to the link, so
 * what goes on the opener's and the browser's argv (readable by every local user in
 * `/proc/<pid>/cmdline`) is a file path, never the one-time code. The file goes into `open/` of the
 * daemon's own runtime dir (`runtimeDir`: where `daemon.json` names its socket, already checked to be a
 * private dir of the user's), so `floot open` works wherever the daemon's resolver put it, a fresh
 * private dir included when another user had taken the shared-tmpfs name first.
 */
export function writeSignInFile(url: string, runtimeDir: string, now = Date.now()): string {
  const dir = join(runtimeDir, signInPagesDirName);
  ensurePrivateDir(dir, "sign-in page dir");
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    try {
      if (now - statSync(path).mtimeMs > staleAfterMs) rmSync(path, { force: true });
    } catch {
      // Removed meanwhile.
    }
  }
  const path = join(dir, `sign-in-${randomBytes(12).toString("hex")}.html`);
  writeFileSync(path, redirectPage(url), { mode: 0o600, flag: "wx" });
  return pathToFileURL(path).href;
}

function redirectPage(url: string): string {
  const attribute = url.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;");
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8">` +
    `<meta http-equiv="refresh" content="0;url=${attribute}"><title>Floot sign-in</title></head>` +
    `<body><p>Signing in to Floot… <a href="${attribute}">continue</a></p></body></html>\n`
  );
}
