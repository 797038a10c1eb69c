import { createHash, timingSafeEqual } from "node:crypto";
import { ControlToken } from "@bridgeworks/protocol";

export type RandomBytes = (size: number) => Uint8Array;

const tokenBytes = 32;

/** 32 bytes from the given CSPRNG (pass `crypto.randomBytes`), hex encoded. */
export function mintToken(randomBytes: RandomBytes): ControlToken {
  const bytes = randomBytes(tokenBytes);
  if (bytes.length !== tokenBytes) {
    throw new Error(`randomBytes returned ${bytes.length} bytes, expected ${tokenBytes}`);
  }
  return ControlToken.parse(Buffer.from(bytes).toString("hex"));
}

/** Constant-time comparison; hashing first makes the inputs equal in length, so no length leaks either. */
export function tokensEqual(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b));
}

/**
 * `tokensEqual` against one expected token whose digest is taken once: a server checking every
 * request's bearer against its own token hashes only the bearer.
 */
export function tokenMatcher(expected: string): (candidate: string) => boolean {
  const expectedDigest = sha256(expected);
  return (candidate) => timingSafeEqual(sha256(candidate), expectedDigest);
}

function sha256(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}
