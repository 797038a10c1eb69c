import { createHmac, timingSafeEqual } from "node:crypto";
import type { ControlNonce, ControlProcess, ControlToken } from "@bridgeworks/protocol";
import type { RandomBytes } from "./token.js";

// The token never crosses the wire. The hook sends a fresh nonce; the server answers with a nonce of
// its own and a proof, an HMAC keyed by the token over both nonces, its own process and its port; only
// then does the hook send the retire, authenticated by an HMAC over the server's nonce. Whatever else
// holds the port learns a nonce and nothing it could use. Each MAC names its purpose first, so a proof
// can never pass for a retire's MAC nor the other way round.

const nonceBytes = 32;
const macHexPattern = /^[0-9a-f]{64}$/;

/** The scheme of the hook's first request: `Authorization: Bee-Challenge nonce=<hex>`. */
export const challengeScheme = "Bee-Challenge";
/** The server's answer (`WWW-Authenticate`) and the retire's `Authorization`: `Bee-Proof nonce=<hex>, …`. */
export const proofScheme = "Bee-Proof";

export function mintNonce(randomBytes: RandomBytes): ControlNonce {
  const bytes = randomBytes(nonceBytes);
  if (bytes.length !== nonceBytes) {
    throw new Error(`randomBytes returned ${bytes.length} bytes, expected ${nonceBytes}`);
  }
  return Buffer.from(bytes).toString("hex");
}

export interface ProofInput {
  clientNonce: ControlNonce;
  serverNonce: ControlNonce;
  /** The process that serves the control endpoint, as its run file names it. */
  process: ControlProcess;
  port: number;
}

/** What the server sends to show it holds the token. */
export function bridgeProof(token: ControlToken, input: ProofInput): string {
  return mac(token, [
    "bee-retire-proof-v1",
    input.clientNonce,
    input.serverNonce,
    String(input.process.pid),
    input.process.startTime,
    String(input.port),
  ]);
}

/** What the hook sends with the retire to show it holds the token. */
export function retireMac(token: ControlToken, input: Omit<ProofInput, "process">): string {
  return mac(token, ["bee-retire-request-v1", input.serverNonce, input.clientNonce, String(input.port)]);
}

/** Constant-time comparison of two MACs in hex; anything that is not one compares unequal. */
export function macsEqual(received: string, expected: string): boolean {
  if (!macHexPattern.test(received) || !macHexPattern.test(expected)) return false;
  return timingSafeEqual(Buffer.from(received, "hex"), Buffer.from(expected, "hex"));
}

function mac(token: ControlToken, parts: string[]): string {
  // Newline-separated: no part can hold one (hex, digits, a start time from /proc or ps).
  return createHmac("sha256", Buffer.from(token, "hex")).update(parts.join("\n"), "utf8").digest("hex");
}

export type RetireAuthorization =
  | { scheme: "challenge"; clientNonce: ControlNonce }
  | { scheme: "proof"; serverNonce: ControlNonce; mac: string };

const challengePattern = /^Bee-Challenge nonce=([0-9a-f]{64})$/;
const proofPattern = /^Bee-Proof nonce=([0-9a-f]{64}), mac=([0-9a-f]{64})$/;
const serverChallengePattern = /^Bee-Proof nonce=([0-9a-f]{64}), proof=([0-9a-f]{64})$/;

export function challengeAuthorization(clientNonce: ControlNonce): string {
  return `${challengeScheme} nonce=${clientNonce}`;
}

export function retireAuthorization(serverNonce: ControlNonce, retireMacHex: string): string {
  return `${proofScheme} nonce=${serverNonce}, mac=${retireMacHex}`;
}

export function serverChallenge(serverNonce: ControlNonce, proof: string): string {
  return `${proofScheme} nonce=${serverNonce}, proof=${proof}`;
}

/** Reads the hook's `Authorization`: a challenge, a proven retire, or undefined for anything else. */
export function parseRetireAuthorization(value: string): RetireAuthorization | undefined {
  const challenge = challengePattern.exec(value);
  if (challenge) return { scheme: "challenge", clientNonce: challenge[1]! };
  const proof = proofPattern.exec(value);
  if (proof) return { scheme: "proof", serverNonce: proof[1]!, mac: proof[2]! };
  return undefined;
}

/** Reads the server's `WWW-Authenticate` answer to a challenge. */
export function parseServerChallenge(
  value: string,
): { serverNonce: ControlNonce; proof: string } | undefined {
  const match = serverChallengePattern.exec(value);
  return match ? { serverNonce: match[1]!, proof: match[2]! } : undefined;
}

export interface PendingChallengesOptions {
  /** How long a server nonce may be answered. */
  ttlMs: number;
  /** The most nonces kept at once; the oldest is dropped for a new one. */
  max: number;
  now?: () => number;
}

/**
 * The server's nonces not yet answered, each with the client nonce it was issued for. A nonce is good
 * for one retire: `take` removes it whatever comes of the attempt.
 */
export class PendingChallenges {
  readonly #pending = new Map<ControlNonce, { clientNonce: ControlNonce; expiresAt: number }>();
  readonly #ttlMs: number;
  readonly #max: number;
  readonly #now: () => number;

  constructor(options: PendingChallengesOptions) {
    this.#ttlMs = options.ttlMs;
    this.#max = options.max;
    this.#now = options.now ?? (() => performance.now());
  }

  issue(serverNonce: ControlNonce, clientNonce: ControlNonce): void {
    while (this.#pending.size >= this.#max) {
      const oldest = this.#pending.keys().next().value as ControlNonce;
      this.#pending.delete(oldest);
    }
    this.#pending.set(serverNonce, { clientNonce, expiresAt: this.#now() + this.#ttlMs });
  }

  /** The client nonce `serverNonce` was issued for, once; undefined when unknown, used or expired. */
  take(serverNonce: ControlNonce): ControlNonce | undefined {
    const entry = this.#pending.get(serverNonce);
    if (entry === undefined) return undefined;
    this.#pending.delete(serverNonce);
    return entry.expiresAt > this.#now() ? entry.clientNonce : undefined;
  }
}
