#!/usr/bin/env node
// Installs one app of nix/apps.json from a built workspace into <outDir> (the Nix installPhase),
// or checks an installed one (installCheckPhase). Plain Node with no dependencies: it runs inside
// the Nix build, and packages/repo-checks tests it against a made-up workspace.
//
//   node nix/install-app.mjs install <apps.json> <app> <outDir>   (cwd: the workspace root)
//   node nix/install-app.mjs verify  <apps.json> <app> <outDir>
//
// install copies the app's bundle directory (the top directory of `entry`, e.g. bundle/ with
// floot's web/ assets), writes a package.json (for a Pi package: pi.extensions -> the entry), and
// copies each of `externals` with its runtime dependencies into <outDir>/node_modules (what the
// bundler could not inline: native addons). It then verifies, as `verify` does:
//   - the entry exists, and a Pi package's package.json names it in pi.extensions;
//   - every static import in the bundle is relative, a Node builtin, host-provided, or a package
//     found from the bundle (so a dependency the bundle left external cannot be forgotten here);
//   - every native addon (.node) under node_modules loads in this Node.
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { builtinModules, createRequire } from "node:module";
import { dirname, join, relative, resolve, sep } from "node:path";

class InstallError extends Error {}

function fail(message) {
  throw new InstallError(message);
}

function readJson(path) {
  try {
    return JSON.parse(readFileSync(path, "utf8"));
  } catch (error) {
    fail(`cannot read ${path}: ${error.message}`);
  }
}

function loadApp(appsJson, name) {
  const manifest = readJson(appsJson);
  const app = manifest.apps?.[name];
  if (!app)
    fail(`${name} is not an app in ${appsJson} (apps: ${Object.keys(manifest.apps ?? {}).join(", ")})`);
  return { manifest, app };
}

/** Node's node_modules lookup for a package directory (no `exports`: we want the directory). */
function findPackageDir(name, fromDir) {
  let dir = fromDir;
  for (;;) {
    const candidate = join(dir, "node_modules", name);
    if (existsSync(join(candidate, "package.json"))) return realpathSync(candidate);
    const parent = dirname(dir);
    if (parent === dir) return null;
    dir = parent;
  }
}

function walkFiles(dir, predicate, found = []) {
  if (!existsSync(dir)) return found;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walkFiles(path, predicate, found);
    else if (predicate(path)) found.push(path);
  }
  return found;
}

const scriptFile = (path) => /\.(?:c|m)?js$/.test(path);

/**
 * A native package keeps its JS and the addons its JS loads (build/Release/<name>.node, named in
 * its scripts); build intermediates (obj.target/), other build products (better-sqlite3's
 * test_extension, an SQLite extension, not a Node addon) and C sources go.
 */
function pruneNativePackage(dir) {
  if (!existsSync(join(dir, "binding.gyp"))) return;
  const build = join(dir, "build");
  if (existsSync(build)) {
    const release = join(build, "Release");
    const scripts = walkFiles(dir, (path) => scriptFile(path) && !path.startsWith(`${build}${sep}`))
      .map((path) => readFileSync(path, "utf8"))
      .join("\n");
    const named = existsSync(release)
      ? readdirSync(release).filter(
          (file) => file.endsWith(".node") && scripts.includes(file.slice(0, -".node".length)),
        )
      : [];
    const addons = named.map((file) => [join(release, file), readFileSync(join(release, file))]);
    rmSync(build, { recursive: true, force: true });
    for (const [path, bytes] of addons) {
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, bytes, { mode: 0o755 });
    }
  }
  for (const sources of ["deps", "src"]) {
    const path = join(dir, sources);
    if (existsSync(path) && walkFiles(path, scriptFile).length === 0) rmSync(path, { recursive: true });
  }
}

function copyExternals({ app, manifest, appDir, root, outDir }) {
  const omit = new Set(manifest.runtimeOmit ?? []);
  const top = join(outDir, "node_modules");
  const placed = new Map(); // name -> real directory placed at <outDir>/node_modules/<name>

  const place = (name, fromDir, parentDest, optional, chain) => {
    const real =
      findPackageDir(name, fromDir) ??
      // pnpm hoists every package here, for packages that are not a direct dependency of the app.
      findPackageDir(name, join(root, "node_modules", ".pnpm"));
    if (!real) {
      if (optional) return;
      fail(`${[...chain, name].join(" -> ")}: package not found from ${relative(root, fromDir) || "."}`);
    }
    let dest;
    if (!placed.has(name)) {
      dest = join(top, name);
      placed.set(name, real);
    } else if (placed.get(name) === real) {
      return;
    } else {
      // Another version already sits at the top: nest this one under the package that needs it.
      dest = join(parentDest, "node_modules", name);
      if (existsSync(dest)) return;
    }
    cpSync(real, dest, {
      recursive: true,
      dereference: true,
      filter: (source) => !relative(real, source).split(sep).includes("node_modules"),
    });
    pruneNativePackage(dest);
    const pkg = readJson(join(real, "package.json"));
    for (const dep of Object.keys(pkg.dependencies ?? {})) {
      if (!omit.has(dep)) place(dep, real, dest, false, [...chain, name]);
    }
    for (const dep of Object.keys(pkg.optionalDependencies ?? {})) {
      if (!omit.has(dep)) place(dep, real, dest, true, [...chain, name]);
    }
  };

  for (const name of app.externals ?? []) place(name, appDir, top, false, [app.workspace]);
}

function writePackageJson({ app, appDir, outDir }) {
  const source = readJson(join(appDir, "package.json"));
  const pkg = {
    name: source.name,
    version: source.version,
    description: source.description ?? app.description,
    type: "module",
    license: source.license,
  };
  if (app.kind === "pi-package") {
    pkg.keywords = ["pi-package"];
    pkg.pi = { extensions: [`./${app.entry}`] };
  } else {
    pkg.private = true;
  }
  writeFileSync(join(outDir, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
}

function packageName(specifier) {
  const parts = specifier.split("/");
  return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

const staticImport = /(?:^|[;}\n])[ \t]*(?:import|export)\b(?:[^;'"`]*?\bfrom)?[ \t]*(["'])([^"'\n]+)\1/g;

function bareImports(file) {
  const found = new Set();
  for (const match of readFileSync(file, "utf8").matchAll(staticImport)) {
    const specifier = match[2];
    if (/^(?:\.|\/|node:|data:|file:)/.test(specifier)) continue;
    found.add(specifier);
  }
  return found;
}

/** hostProvided entries are package names, or "@scope/*" for every package of a scope. */
function isHostProvided(hostProvided, name) {
  return hostProvided.some((entry) =>
    entry.endsWith("/*") ? name.startsWith(entry.slice(0, -1)) : entry === name,
  );
}

function verify({ app, outDir }) {
  const entry = join(outDir, app.entry);
  if (!existsSync(entry)) fail(`${app.entry} is missing from ${outDir}`);
  const pkg = readJson(join(outDir, "package.json"));
  if (app.kind === "pi-package" && !(pkg.pi?.extensions ?? []).includes(`./${app.entry}`)) {
    fail(`package.json pi.extensions does not name ./${app.entry}`);
  }

  const builtins = new Set(builtinModules);
  const hostProvided = app.hostProvided ?? [];
  const bundleDir = join(outDir, app.entry.split("/")[0]);
  const missing = [];
  for (const file of walkFiles(bundleDir, scriptFile)) {
    for (const specifier of bareImports(file)) {
      const name = packageName(specifier);
      if (builtins.has(specifier) || builtins.has(name) || isHostProvided(hostProvided, name)) continue;
      if (!findPackageDir(name, dirname(file)))
        missing.push(`${name} (imported by ${relative(outDir, file)})`);
    }
  }
  for (const name of app.externals ?? []) {
    if (!findPackageDir(name, dirname(entry))) missing.push(`${name} (listed in externals)`);
  }
  if (missing.length > 0) {
    fail(
      `the installed bundle imports packages that are not installed beside it: ${missing.join(", ")}. ` +
        `List each in nix/apps.json "externals" (or "hostProvided" when the host program supplies it).`,
    );
  }

  const load = createRequire(import.meta.url);
  for (const addon of walkFiles(join(outDir, "node_modules"), (path) => path.endsWith(".node"))) {
    try {
      load(addon);
    } catch (error) {
      fail(`native addon ${relative(outDir, addon)} does not load: ${error.message}`);
    }
  }
}

function install({ app, manifest, name, outDir }) {
  const root = process.cwd();
  const appDir = resolve(root, app.dir);
  if (!existsSync(join(appDir, "package.json"))) fail(`${app.dir}/package.json is missing`);
  const bundleTop = app.entry.split("/")[0];
  const bundleDir = join(appDir, bundleTop);
  if (!existsSync(join(appDir, app.entry))) fail(`${app.dir}/${app.entry} is missing: did the build run?`);
  if (!statSync(bundleDir).isDirectory()) fail(`${app.dir}/${bundleTop} is not a directory`);

  rmSync(outDir, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  cpSync(bundleDir, join(outDir, bundleTop), { recursive: true, dereference: true });
  writePackageJson({ app, appDir, outDir });
  copyExternals({ app, manifest, appDir, root, outDir });
  verify({ app, outDir });
  console.log(`install-app: ${name} -> ${outDir}`);
}

const [mode, appsJson, name, outDir] = process.argv.slice(2);
try {
  if (!["install", "verify"].includes(mode) || !appsJson || !name || !outDir) {
    fail("usage: install-app.mjs install|verify <apps.json> <app> <outDir>");
  }
  const { manifest, app } = loadApp(appsJson, name);
  const target = resolve(outDir);
  if (mode === "install") install({ app, manifest, name, outDir: target });
  else {
    verify({ app, outDir: target });
    console.log(`install-app: ${name} at ${target} verified`);
  }
} catch (error) {
  if (!(error instanceof InstallError)) throw error;
  console.error(`install-app: ${name ?? ""}: ${error.message}`);
  process.exit(1);
}
