import manifest from "../package.json" with { type: "json" };

/** This app's version, from its package.json (inlined by the bundler). */
export const flootVersion: string = manifest.version;
