import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { delimiter, join } from "node:path";

/**
 * Hands `url` to the desktop's opener where there is a desktop: `open` on macOS, `xdg-open` under X11 or
 * Wayland. Elsewhere (ssh, CI) does nothing: the printed link is the way in. Never waits for the browser.
 */
export function openInBrowser(url: string, env: Readonly<Record<string, string | undefined>>): boolean {
  const opener = desktopOpener(env);
  if (!opener) return false;
  try {
    const child = spawn(opener, [url], { detached: true, stdio: "ignore" });
    child.on("error", () => {});
    child.unref();
    return true;
  } catch {
    return false;
  }
}

/** The desktop's opener, or undefined where there is no desktop. */
export function desktopOpener(env: Readonly<Record<string, string | undefined>>): string | undefined {
  if (process.platform === "darwin") return "open";
  return env.DISPLAY || env.WAYLAND_DISPLAY ? findOnPath("xdg-open", env.PATH) : undefined;
}

function findOnPath(name: string, path: string | undefined): string | undefined {
  for (const dir of (path ?? "").split(delimiter)) {
    if (dir && existsSync(join(dir, name))) return join(dir, name);
  }
  return undefined;
}
