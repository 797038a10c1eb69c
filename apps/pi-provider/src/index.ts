import { PROVIDER_NAME } from "./models.js";
import { type PiExtensionHost, registerOnce } from "./pi-adapter.js";
import { createClaudeCodeProvider } from "./provider.js";

export { claudeCodeModels, PROVIDER_API, PROVIDER_NAME } from "./models.js";
export { type ClaudeCodeProvider, createClaudeCodeProvider } from "./provider.js";

/** Pi extension entry (both Pi lines): registers provider `claude-code`. */
export default function claudeCodeExtension(pi: PiExtensionHost): void {
  let provider: ReturnType<typeof createClaudeCodeProvider> | undefined;
  const registered = registerOnce(pi, PROVIDER_NAME, () => {
    provider = createClaudeCodeProvider({ env: process.env, cwd: process.cwd() });
    return provider.registration;
  });
  if (!registered) return;
  pi.on?.("session_shutdown", async () => {
    await provider?.dispose();
  });
}
