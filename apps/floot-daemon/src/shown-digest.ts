import { createHash } from "node:crypto";

/**
 * What a permission decision names: SHA-256 (hex) of the UTF-8 of the text the human was shown (a
 * request's `inputSummary`). The daemon checks it; the CLI computes it over what it printed (the web UI
 * computes the same with WebCrypto over what its card shows).
 */
export function digestShown(shown: string): string {
  return createHash("sha256").update(shown, "utf8").digest("hex");
}
