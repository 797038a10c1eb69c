import { defineCommand } from "@bridgeworks/cli";
import type { FlootLoginCode } from "@bridgeworks/protocol";
import type { FlootContext } from "./context.js";
import { connect, daemonOptions, show } from "./daemon-connection.js";
import { openInBrowser } from "./open-browser.js";

export const openCommand = defineCommand<FlootContext>()({
  name: "open",
  summary: "print a one-time login link to the web UI (and open it where there is a desktop)",
  options: {
    "no-browser": { type: "boolean", summary: "only print the link" },
    ...daemonOptions,
  },
  async run({ options }, context) {
    const client = connect(context, options.state);
    const login = await client.request<FlootLoginCode>("POST", "/v1/ui/login-codes");
    const url = `${await client.webUrl()}/login?code=${login.code}`;
    show(context, options.json, { url, expiresAt: login.expiresAt }, () => url);
    if (!options.json) context.stderr.write(`a one-time link, valid until ${login.expiresAt}\n`);
    if (!options["no-browser"]) openInBrowser(url, context.env);
  },
});
