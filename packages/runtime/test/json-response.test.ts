import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { expect, test } from "vitest";
import { sendJson } from "../src/index.js";

test("sendJson answers JSON with its length, never cached or sniffed, the caller's headers added", async () => {
  const server = createServer((_request, response) =>
    sendJson(response, 418, { ok: "ü" }, { "retry-after": "3" }),
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  try {
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
    expect(response.status).toBe(418);
    expect(Object.fromEntries(response.headers)).toMatchObject({
      "content-type": "application/json",
      "content-length": String(Buffer.byteLength('{"ok":"ü"}')),
      "cache-control": "no-store",
      "x-content-type-options": "nosniff",
      "retry-after": "3",
    });
    expect(await response.json()).toEqual({ ok: "ü" });
  } finally {
    await new Promise((resolve) => server.close(resolve));
  }
});
