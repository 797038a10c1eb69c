import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";

// Both ends of the keeper's socket prove they hold the state dir's keeper key before anything else is
// said: the keeper over the daemon's nonce, the daemon over the keeper's. The labels differ, so one
// proof never passes for the other.

export type KeeperRole = "keeper" | "daemon";

export function mintKeeperNonce(random: (size: number) => Buffer = randomBytes): string {
  return random(32).toString("base64url");
}

export function keeperProof(key: Buffer, role: KeeperRole, nonce: string): string {
  return createHmac("sha256", key).update(`floot-keeper-${role}\n${nonce}`, "utf8").digest("base64url");
}

export function keeperProofHolds(key: Buffer, role: KeeperRole, nonce: string, proof: string): boolean {
  const expected = Buffer.from(keeperProof(key, role, nonce), "base64url");
  const given = Buffer.from(proof, "base64url");
  return given.length === expected.length && timingSafeEqual(given, expected);
}
