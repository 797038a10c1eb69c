import { registerDoctorCommand } from "./doctor.js";
import { PROVIDER_NAME } from "./models.js";
import { type PiExtensionHost, registerOnce } from "./pi-adapter.js";
import { PiSessionFollower } from "./pi-session-events.js";
import { type ClaudeCodeProvider, createClaudeCodeProvider } from "./provider.js";

export { claudeCodeModels, PROVIDER_API, PROVIDER_NAME } from "./models.js";
export { type ClaudeCodeProvider, createClaudeCodeProvider } from "./provider.js";

/** Pi extension entry (both Pi lines): registers provider `claude-code` and follows Pi's session. */
export default function claudeCodeExtension(pi: PiExtensionHost): void {
  const warn = (line: string) => process.stderr.write(`${line}\n`);
  const follower = new PiSessionFollower(pi, warn);
  let provider: ClaudeCodeProvider | undefined;
  const registered = registerOnce(pi, PROVIDER_NAME, () => {
    provider = createClaudeCodeProvider({
      env: process.env,
      cwd: process.cwd(),
      warn,
      status: (text) => follower.showStatus(text),
    });
    return provider.registration;
  });
  if (!registered || !provider) return;
  follower.follow(provider);
  registerDoctorCommand(pi, provider);
}
