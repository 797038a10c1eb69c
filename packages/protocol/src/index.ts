export * from "./board.js";
export * from "./claude-hooks.js";
export * from "./control.js";
export * from "./delivery.js";
export * from "./floot-api.js";
export * from "./identity.js";
export * from "./secret.js";
export * from "./turn.js";
