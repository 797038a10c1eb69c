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

function sha256(value: string): Buffer {
  return createHash("sha256").update(value, "utf8").digest();
}
