// The README's example, type-checked (scripts/readme-examples.mjs keeps the README's copy equal).

//#region use
import { startModelDouble } from "@bridgeworks/model-double";

const double = await startModelDouble({ steps: [{ response: { events: [{ type: "text", text: "hi" }] } }] });
// … run the client against double.url …
const request = await double.waitForRequest((r) => r.api === "anthropic", { timeoutMs: 10_000 });
await double.close();

//#endregion use

export { request };
