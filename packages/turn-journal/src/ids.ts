import { randomBytes as cryptoRandomBytes } from "node:crypto";

export type RandomBytes = (size: number) => Uint8Array;

/**
 * Makes a UUIDv7 generator (RFC 9562): 48-bit Unix milliseconds, then a 12-bit counter seeded at random
 * each millisecond (method 1), so ids from one generator sort in creation order even within a millisecond.
 */
export function createUuidV7Generator(
  now: () => number,
  randomBytes: RandomBytes = cryptoRandomBytes,
): () => string {
  let lastMilliseconds = -1;
  let counter = 0;
  return () => {
    let milliseconds = Math.max(now(), lastMilliseconds);
    if (milliseconds === lastMilliseconds) {
      counter += 1;
      if (counter > 0xfff) {
        milliseconds += 1;
        counter = 0;
      }
    } else {
      // Seed below half the range so a burst within one millisecond has room to count up.
      counter = ((randomBytes(2)[0] ?? 0) << 3) & 0x7ff;
    }
    lastMilliseconds = milliseconds;
    const bytes = new Uint8Array(16);
    bytes.set(randomBytes(8), 8);
    let time = milliseconds;
    for (let index = 5; index >= 0; index -= 1) {
      bytes[index] = time % 256;
      time = Math.floor(time / 256);
    }
    bytes[6] = 0x70 | (counter >> 8);
    bytes[7] = counter & 0xff;
    bytes[8] = 0x80 | ((bytes[8] ?? 0) & 0x3f);
    const hex = Buffer.from(bytes).toString("hex");
    return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  };
}
