#!/usr/bin/env node
// The npm registry inside the Nix build: serves the tarballs Nix fetched (nix/npm-tarballs.json,
// one fetchurl each) on 127.0.0.1, at the paths `pnpm install --registry` asks for, so pnpm
// installs the workspace from them with no network. Plain Node with no dependencies.
//
//   node nix/npm-registry.mjs <manifest.json> <port-file>
//
// manifest.json maps a registry path ("/zod/-/zod-4.6.7.tgz") to a tarball file. The port (bound
// on 127.0.0.1, chosen by the kernel) is written to <port-file> once the server listens, atomically.
// Any other request is answered 404 and named on stderr: a tarball pnpm wants that the list lacks
// is the one line to read when an install fails. SIGTERM closes the server.
import { createReadStream, readFileSync, renameSync, statSync, writeFileSync } from "node:fs";
import { createServer } from "node:http";

const [manifestPath, portFile, ...rest] = process.argv.slice(2);
if (!manifestPath || !portFile || rest.length > 0) {
  console.error("usage: npm-registry.mjs <manifest.json> <port-file>");
  process.exit(2);
}

let tarballs;
try {
  tarballs = new Map(Object.entries(JSON.parse(readFileSync(manifestPath, "utf8"))));
} catch (error) {
  console.error(`npm-registry: cannot read ${manifestPath}: ${error.message}`);
  process.exit(2);
}
for (const [path, file] of tarballs) {
  if (!path.startsWith("/") || !path.endsWith(".tgz")) {
    console.error(`npm-registry: ${manifestPath}: ${path} is not a registry tarball path`);
    process.exit(2);
  }
  try {
    statSync(file);
  } catch {
    console.error(`npm-registry: ${manifestPath}: ${path} -> ${file}, which does not exist`);
    process.exit(2);
  }
}

const server = createServer((request, response) => {
  // pnpm asks for "/@scope/name/-/name-1.0.0.tgz"; it may escape the scope's slash.
  const path = decodeURIComponent(new URL(request.url ?? "/", "http://registry").pathname);
  const file = tarballs.get(path);
  if (!file || (request.method !== "GET" && request.method !== "HEAD")) {
    console.error(`npm-registry: 404 ${request.method} ${path}: not a tarball this build fetched`);
    response.writeHead(404, { "content-type": "text/plain" });
    response.end("not found\n");
    return;
  }
  response.writeHead(200, {
    "content-type": "application/octet-stream",
    "content-length": statSync(file).size,
  });
  if (request.method === "HEAD") response.end();
  else createReadStream(file).pipe(response);
});

server.listen(0, "127.0.0.1", () => {
  const { port } = server.address();
  writeFileSync(`${portFile}.tmp`, `${port}\n`);
  renameSync(`${portFile}.tmp`, portFile);
});
server.on("error", (error) => {
  console.error(`npm-registry: ${error.message}`);
  process.exit(1);
});
process.on("SIGTERM", () => {
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
