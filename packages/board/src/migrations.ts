import { BoardError } from "./errors.js";

/** One step of a store's schema; `up` takes what that store migrates with. */
export interface Migration<Up> {
  version: number;
  up: Up;
}

/** The version a store's migrations bring its schema to. */
export function latestVersion(migrations: readonly Migration<unknown>[]): number {
  return migrations.at(-1)?.version ?? 0;
}

/** A schema from a newer bee is refused rather than misread. `noun` names the store: `board file`. */
export function refuseNewerSchema(found: number, supported: number, noun: string): void {
  if (found > supported) {
    throw new BoardError(
      "incompatible_store",
      `the ${noun} has schema version ${found}; this bee reads up to ${supported}`,
    );
  }
}

/** The id a new board gets, which its cursors carry so another board refuses them. */
export function mintBoardId(randomBytes: (size: number) => Uint8Array): string {
  return Buffer.from(randomBytes(8)).toString("hex");
}
