// A small reader of TypeScript source for the shape checks (source-shape.test.ts): enough to find
// comments, strings, class bodies and relative imports, not a parser of the language.
import { existsSync, readdirSync, statSync } from "node:fs";
import { dirname, join, relative } from "node:path";

/** Every `.ts`/`.mts`/`.tsx` file under `dir` (declaration files left out), as paths relative to `root`. */
export function sourceFilesUnder(root: string, dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sourceFilesUnder(root, path);
    return /\.(ts|mts|tsx)$/.test(name) && !name.endsWith(".d.ts") ? [relative(root, path)] : [];
  });
}

// After one of these (or at the start) a `/` begins a regular expression, not a division.
const beforeRegex = new Set([..."(,=:[!&|?{};+-*%<>~^"]);
const keywordsBeforeRegex = /\b(return|typeof|case|do|else|in|of|void|yield|await|throw|delete|new)$/;

/**
 * `text` with every comment blanked, and with `strings` the contents of every string, template
 * literal (outside its `${…}` parts) and regular expression blanked too: same length, same lines, so
 * what is left is code whose braces and keywords can be counted.
 */
export function blankOut(text: string, { strings }: { strings: boolean }): string {
  const out = [...text];
  const blank = (from: number, to: number) => {
    for (let at = from; at < to; at += 1) if (out[at] !== "\n") out[at] = " ";
  };
  /** Open template literals: the brace depth their `${` was opened at. */
  const templates: number[] = [];
  let braces = 0;
  let last = "";
  let at = 0;
  const skipQuoted = (quote: string): number => {
    let end = at + 1;
    while (end < text.length && text[end] !== quote && text[end] !== "\n") end += text[end] === "\\" ? 2 : 1;
    return end;
  };
  /** From inside a template literal: where its text ends (at the closing backtick or a `${`). */
  const templateText = (from: number): { end: number; closed: boolean } => {
    let end = from;
    while (end < text.length) {
      if (text[end] === "\\") end += 2;
      else if (text[end] === "`") return { end, closed: true };
      else if (text[end] === "$" && text[end + 1] === "{") return { end, closed: false };
      else end += 1;
    }
    return { end, closed: true };
  };
  const inTemplate = (from: number) => {
    const { end, closed } = templateText(from);
    if (strings) blank(from, end);
    if (closed) {
      at = end + 1;
      last = "`";
    } else {
      templates.push(braces);
      braces += 1;
      at = end + 2;
      last = "{";
    }
  };
  while (at < text.length) {
    const char = text[at]!;
    const next = text[at + 1];
    if (char === "/" && next === "/") {
      const end = text.indexOf("\n", at);
      const stop = end === -1 ? text.length : end;
      blank(at, stop);
      at = stop;
    } else if (char === "/" && next === "*") {
      const end = text.indexOf("*/", at + 2);
      const stop = end === -1 ? text.length : end + 2;
      blank(at, stop);
      at = stop;
    } else if (char === '"' || char === "'") {
      const end = skipQuoted(char);
      if (strings) blank(at + 1, end);
      at = end + 1;
      last = char;
    } else if (char === "`") {
      inTemplate(at + 1);
    } else if (
      char === "/" &&
      (last === "" || beforeRegex.has(last) || keywordsBeforeRegex.test(text.slice(0, at).trimEnd()))
    ) {
      let end = at + 1;
      let inClass = false;
      while (end < text.length && text[end] !== "\n" && (inClass || text[end] !== "/")) {
        if (text[end] === "\\") end += 1;
        else if (text[end] === "[") inClass = true;
        else if (text[end] === "]") inClass = false;
        end += 1;
      }
      if (strings) blank(at + 1, end);
      at = end + 1;
      last = "/";
    } else {
      if (char === "{") braces += 1;
      else if (char === "}") {
        braces -= 1;
        if (templates.at(-1) === braces) {
          templates.pop();
          inTemplate(at + 1);
          continue;
        }
      }
      if (!/\s/.test(char)) last = char;
      at += 1;
    }
  }
  return out.join("");
}

/** Where the brace opened at `open` closes (`code` already blanked of comments and strings). */
function closingBrace(code: string, open: number): number {
  let depth = 0;
  for (let at = open; at < code.length; at += 1) {
    if (code[at] === "{") depth += 1;
    else if (code[at] === "}") {
      depth -= 1;
      if (depth === 0) return at;
    }
  }
  return code.length;
}

export interface ClassShape {
  name: string;
  line: number;
  publicMethods: string[];
}

/**
 * Each class of `source` with its public methods: methods and accessors (a getter and its setter are
 * one name), static ones too, and fields whose value is a function, without a `private`/`protected`
 * modifier or a `#` name; the constructor is not one.
 */
export function classesOf(source: string): ClassShape[] {
  const code = blankOut(source, { strings: true });
  const classes: ClassShape[] = [];
  for (const found of code.matchAll(/(?<![.\w$])class(?:\s+([A-Za-z_$][\w$]*))?[\s<{]/g)) {
    const body = bodyStart(code, found.index + "class".length);
    if (body === undefined) continue;
    classes.push({
      name: found[1] ?? "(anonymous)",
      line: code.slice(0, found.index).split("\n").length,
      publicMethods: publicMethodsOf(code.slice(body + 1, closingBrace(code, body))),
    });
  }
  return classes;
}

/** The `{` that opens a class body: the first one outside the head's type arguments and parentheses. */
function bodyStart(code: string, from: number): number | undefined {
  let angles = 0;
  let parens = 0;
  for (let at = from; at < code.length; at += 1) {
    const char = code[at];
    if (char === "<") angles += 1;
    else if (char === ">" && code[at - 1] !== "=") angles -= 1;
    else if (char === "(") parens += 1;
    else if (char === ")") parens -= 1;
    else if (char === "{" && angles === 0 && parens === 0) return at;
    else if (char === ";" && angles === 0 && parens === 0) return undefined;
  }
  return undefined;
}

const modifiers = new Set([
  "public",
  "private",
  "protected",
  "static",
  "readonly",
  "async",
  "abstract",
  "override",
  "declare",
  "accessor",
  "get",
  "set",
]);

function publicMethodsOf(body: string): string[] {
  const names = new Set<string>();
  for (const member of membersOf(body)) {
    const words = member.trimStart();
    let rest = words;
    const seen: string[] = [];
    for (;;) {
      const word = /^([A-Za-z_$#][\w$]*|\*)\s*/.exec(rest);
      if (!word) break;
      const after = rest.slice(word[0].length);
      // A modifier is one only when a name follows it: `get()` is a method named get.
      if (modifiers.has(word[1]!) && /^[A-Za-z_$#*[]/.test(after)) {
        seen.push(word[1]!);
        rest = after;
        continue;
      }
      if (word[1] === "*") {
        rest = after;
        continue;
      }
      const name = word[1]!;
      if (name === "constructor" || name.startsWith("#")) break;
      if (seen.includes("private") || seen.includes("protected")) break;
      const isMethod = /^[?!]?\s*[(<]/.test(after);
      const isFunctionField =
        /^[?!]?\s*(:[^=]*)?=\s*(async\s+)?(function\b|(\([^)]*\)|[A-Za-z_$][\w$]*)\s*(:[^=]*)?=>)/.test(
          after,
        );
      if (isMethod || isFunctionField) names.add(name);
      break;
    }
  }
  return [...names].sort();
}

/** A class body cut into its members: each ends at a `;` or at the `}` closing its own braces. */
function membersOf(body: string): string[] {
  const members: string[] = [];
  let depth = 0;
  let parens = 0;
  let start = 0;
  for (let at = 0; at < body.length; at += 1) {
    const char = body[at];
    if (char === "(") parens += 1;
    else if (char === ")") parens -= 1;
    else if (char === "{") depth += 1;
    else if (char === "}") {
      depth -= 1;
      if (depth === 0 && parens === 0) {
        members.push(body.slice(start, at + 1));
        start = at + 1;
      }
    } else if (char === ";" && depth === 0 && parens === 0) {
      members.push(body.slice(start, at));
      start = at + 1;
    }
  }
  members.push(body.slice(start));
  return members.filter((member) => member.trim() !== "");
}

/**
 * The relative modules `source` (at `file`) imports statically, as files: `import … from`, `import "…"`
 * and `export … from`, type-only ones included; `import()` left out. `./x.js` is `./x.ts` (or `.tsx`,
 * `.mts`) when that exists, a folder its `index.ts`.
 */
export function relativeImportsOf(root: string, file: string, source: string): string[] {
  const code = blankOut(source, { strings: false });
  const specifiers = [
    ...code.matchAll(/(?<![\w$.])(?:import|export)\s+(?:type\s+)?(?:[^;"'`()]*?\sfrom\s*)?["']([^"']+)["']/g),
  ].map((found) => found[1]!);
  return specifiers
    .filter((specifier) => specifier.startsWith("./") || specifier.startsWith("../"))
    .flatMap((specifier) => {
      const target = join(dirname(file), specifier);
      const stem = target.replace(/\.(m?js|jsx)$/, "");
      const candidates = [`${stem}.ts`, `${stem}.tsx`, `${stem}.mts`, target, join(target, "index.ts")];
      const found = candidates.find(
        (candidate) => existsSync(join(root, candidate)) && !statSync(join(root, candidate)).isDirectory(),
      );
      return found === undefined ? [] : [found];
    });
}

/** Every cycle of a module graph, one per strongly connected part, as a path that returns to its start. */
export function cyclesOf(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  // Tarjan's strongly connected components.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const parts: string[][] = [];
  let next = 0;
  const visit = (node: string) => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const target of graph.get(node) ?? []) {
      if (!index.has(target)) {
        visit(target);
        low.set(node, Math.min(low.get(node)!, low.get(target)!));
      } else if (onStack.has(target)) {
        low.set(node, Math.min(low.get(node)!, index.get(target)!));
      }
    }
    if (low.get(node) === index.get(node)) {
      const part: string[] = [];
      let member: string;
      do {
        member = stack.pop()!;
        onStack.delete(member);
        part.push(member);
      } while (member !== node);
      if (part.length > 1 || (graph.get(node) ?? []).includes(node)) parts.push(part);
    }
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return parts.map((part) => cycleWithin(graph, new Set(part)));
}

/** One cycle through the part's first module (sorted), by breadth-first search inside the part. */
function cycleWithin(graph: ReadonlyMap<string, readonly string[]>, part: ReadonlySet<string>): string[] {
  const start = [...part].sort()[0]!;
  const cameFrom = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const target of graph.get(node) ?? []) {
      if (!part.has(target)) continue;
      if (target === start) {
        const path = [start];
        for (let at = node; at !== start; at = cameFrom.get(at)!) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!cameFrom.has(target)) {
        cameFrom.set(target, node);
        queue.push(target);
      }
    }
  }
  return [start, start];
}
