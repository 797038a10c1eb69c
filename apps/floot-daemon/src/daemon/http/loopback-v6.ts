import type { Server } from "node:http";

/** Whether this daemon holds `[::1]:<port>`; if not, why (the sentence a refused `localhost` request reads). */
export type LoopbackV6 = { held: true } | { held: false; code: string; why: string };

/**
 * Binds `server` to `[::1]:<port>`, the port the daemon holds on 127.0.0.1. A browser resolves
 * `localhost` to `[::1]` first (Chromium does), so whoever holds `[::1]:<port>` gets what a `localhost`
 * link carries: the daemon holds it itself, and where it cannot (taken by another process, or no IPv6
 * loopback) `localhost` is not served at all.
 */
export function listenLoopbackV6(server: Server, port: number): Promise<LoopbackV6> {
  return new Promise((resolve) => {
    const failed = (error: NodeJS.ErrnoException) => {
      const code = error.code ?? "unknown";
      resolve({
        held: false,
        code,
        why:
          code === "EADDRINUSE"
            ? `another process holds [::1]:${port}, where a browser sends localhost first`
            : `[::1]:${port} cannot be bound (${code}), so a browser could reach something else there`,
      });
    };
    server.once("error", failed);
    server.listen({ port, host: "::1", ipv6Only: true }, () => {
      server.off("error", failed);
      resolve({ held: true });
    });
  });
}
