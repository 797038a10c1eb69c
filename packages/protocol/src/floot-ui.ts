import { z } from "zod";
import { lazySchema } from "./lazy-schema.js";

// The Floot web UI's sign-in and credential, between the page and the daemon (`/ui/*`).

const Base64Url256 = lazySchema(() => z.string().regex(/^[A-Za-z0-9_-]{43}$/, "must be 32 bytes, base64url"));

/**
 * The page's public key, as WebCrypto exports it (JWK; only the fields that name it): ECDSA P-256. The
 * private half is a non-extractable `CryptoKey` in the page's IndexedDB, never sent anywhere.
 */
export const UiPublicKey = lazySchema(() =>
  z.strictObject({
    kty: z.literal("EC"),
    crv: z.literal("P-256"),
    x: Base64Url256,
    y: Base64Url256,
  }),
);
export type UiPublicKey = z.infer<typeof UiPublicKey>;

/** `POST /ui/sign-in` body: the code from the sign-in link's fragment and the page's public key. */
export const UiSignInRequest = lazySchema(() =>
  z.strictObject({ code: Base64Url256, publicKey: UiPublicKey }),
);
export type UiSignInRequest = z.infer<typeof UiSignInRequest>;

/**
 * Why `POST /ui/sign-in` refused a code (401, the error's `code`): the link was used already, ran out
 * (a code lives 60 s), or is not one this daemon process issued (mistyped, or minted before a restart).
 */
export const UiSignInRefusal = lazySchema(() =>
  z.enum(["sign_in_link_used", "sign_in_link_expired", "sign_in_link_unknown"]),
);
export type UiSignInRefusal = z.infer<typeof UiSignInRefusal>;

/**
 * The answer to a sign-in. `token` names the sign-in (valid only on the origin it was issued for, with
 * a signature by the page's key: alone it opens nothing); `identityKey` lets the page check the
 * daemon's identity (`POST /ui/identity`) before it sends anything.
 */
export const UiCredential = lazySchema(() =>
  z.strictObject({
    token: Base64Url256,
    sessionId: Base64Url256,
    identityKey: Base64Url256,
    origin: z.string(),
    expiresAt: z.iso.datetime({ offset: true }),
  }),
);
export type UiCredential = z.infer<typeof UiCredential>;

/** `POST /ui/identity`: a fresh nonce; the daemon answers HMAC-SHA256(identityKey, `<origin>\n<nonce>`). */
export const UiIdentityRequest = lazySchema(() =>
  z.strictObject({ sessionId: Base64Url256, nonce: Base64Url256 }),
);
export type UiIdentityRequest = z.infer<typeof UiIdentityRequest>;

export const UiIdentityProof = lazySchema(() => z.strictObject({ proof: Base64Url256 }));
export type UiIdentityProof = z.infer<typeof UiIdentityProof>;

/** `POST /ui/challenge`, after the identity proof: the sign-in's token asks for a nonce to sign. */
export const UiChallengeRequest = lazySchema(() => z.strictObject({ token: Base64Url256 }));
export type UiChallengeRequest = z.infer<typeof UiChallengeRequest>;

/** A nonce of this daemon process (memory only), single use, for this sign-in and origin, until `expiresAt`. */
export const UiChallenge = lazySchema(() =>
  z.strictObject({ nonce: Base64Url256, expiresAt: z.iso.datetime({ offset: true }) }),
);
export type UiChallenge = z.infer<typeof UiChallenge>;

/**
 * `POST /ui/access`: the token, the challenge's nonce and the page key's ECDSA P-256 / SHA-256 signature
 * (IEEE P1363, r‖s: 64 bytes, base64url) over `floot-ui-access\n<origin>\n<nonce>`.
 */
export const UiAccessRequest = lazySchema(() =>
  z.strictObject({
    token: Base64Url256,
    nonce: Base64Url256,
    signature: z.string().regex(/^[A-Za-z0-9_-]{86}$/, "must be a 64-byte P-256 signature, base64url"),
  }),
);
export type UiAccessRequest = z.infer<typeof UiAccessRequest>;

/**
 * What the page sends as `Authorization: Bearer` on `/v1`: kept in the page's memory only, known to this
 * daemon process only (a restart ends it), bound to the origin, valid until `expiresAt`.
 */
export const UiAccess = lazySchema(() =>
  z.strictObject({ accessToken: Base64Url256, expiresAt: z.iso.datetime({ offset: true }) }),
);
export type UiAccess = z.infer<typeof UiAccess>;
