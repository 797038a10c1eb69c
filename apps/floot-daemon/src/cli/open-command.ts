import { dirname } from "node:path";
import { defineCommand } from "@bridgeworks/cli";
import type { FlootLoginCode } from "@bridgeworks/protocol";
import type { FlootContext } from "./context.js";
import { connect, daemonOptions, show } from "./daemon-connection.js";
import { desktopOpener, openInBrowser } from "./open-browser.js";
import { writeSignInFile } from "./sign-in-file.js";

export const openCommand = defineCommand<FlootContext>()({
  name: "open",
  summary: "print a one-time sign-in link to the web UI (and open it where there is a desktop)",
  description:
    "The link's code is in its fragment (#login=…), which a browser never sends to a server. The browser\n" +
    "is handed a 0600 redirect file in the daemon's private runtime dir, never the link: argv is public.",
  options: {
    "no-browser": { type: "boolean", summary: "only print the link" },
    ...daemonOptions,
  },
  async run({ options }, context) {
    const client = connect(context, options.state);
    const login = await client.request<FlootLoginCode>("POST", "/v1/ui/login-codes");
    const url = `${await client.webUrl()}/#login=${login.code}`;
    show(context, options.json, { url, expiresAt: login.expiresAt }, () => url);
    if (!options.json) context.stderr.write(`a one-time link, valid until ${login.expiresAt}\n`);
    if (!options["no-browser"] && desktopOpener(context.env) !== undefined) {
      openInBrowser(writeSignInFile(url, dirname(client.socketPath)), context.env);
    }
  },
});
