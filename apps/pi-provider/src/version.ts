import manifest from "../package.json" with { type: "json" };

/** This package's version, from its package.json (inlined by the bundler). */
export const piProviderVersion: string = manifest.version;
