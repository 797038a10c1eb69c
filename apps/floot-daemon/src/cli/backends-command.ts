import { defineCommand } from "@bridgeworks/cli";
import type { FlootBackendList, FlootBackendStatus } from "@bridgeworks/protocol";
import type { FlootContext } from "./context.js";
import { connect, daemonOptions, show } from "./daemon-connection.js";

const describeBackend = (b: FlootBackendStatus) => {
  const where = b.installed
    ? `${b.path} (${b.version ?? "version unknown"})`
    : `not installed: ${b.installHint}`;
  const login = b.signedIn.likely ? `signed in (${b.signedIn.via}: ${b.signedIn.detail})` : "not signed in";
  const sandbox = b.sandbox.available
    ? `sandbox: ${b.sandbox.mechanism}`
    : `sandbox unavailable: ${b.sandbox.problem} (sessions need --unconfined)`;
  return `${b.backend}  ${where}  ${login}\n  ${sandbox}`;
};

export const backendsCommand = defineCommand<FlootContext>()({
  name: "backends",
  summary:
    "which backend CLIs the daemon finds: path, version, whether each looks signed in, and whether its sandbox runs here",
  options: daemonOptions,
  async run({ options }, context) {
    const list = await connect(context, options.state).request<FlootBackendList>("GET", "/v1/backends");
    show(context, options.json, list, () => list.backends.map(describeBackend).join("\n"));
  },
});
