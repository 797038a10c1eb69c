// What keeps an app's README a README for its users: short, and its reference in docs/ pages that it
// links, each of which exists and is linked; and no relative link of a README, a docs page or a
// BENCHMARKS.md pointing at a file or a heading that is not there.
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";

export const maxReadmeLines = 200;

/** The lines of a file as an editor counts them (a final newline ends the last line). */
export function lineCount(text: string): number {
  return text.replace(/\n$/, "").split("\n").length;
}

/** The Markdown of `markdown` outside fenced code blocks and inline code spans. */
function prose(markdown: string): string {
  let inFence = false;
  return markdown
    .split("\n")
    .map((line) => {
      if (/^\s*```/.test(line)) {
        inFence = !inFence;
        return "";
      }
      return inFence ? "" : line.replace(/`[^`]*`/g, "");
    })
    .join("\n");
}

/** The targets of the inline links and images of `markdown` (`[text](target)`), outside code. */
export function linkTargets(markdown: string): string[] {
  return [...prose(markdown).matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((match) => match[1] as string);
}

/** GitHub's anchor of a heading: lowercase, punctuation dropped, spaces to hyphens. */
export function headingSlug(heading: string): string {
  return heading
    .replace(/\[([^\]]*)\]\([^)]*\)/g, "$1")
    .toLowerCase()
    .replace(/[^\p{L}\p{M}\p{N}\p{Pc} -]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors of a Markdown file's headings, numbered as GitHub numbers repeated ones. */
export function headingAnchors(markdown: string): Set<string> {
  const anchors = new Set<string>();
  let inFence = false;
  for (const line of markdown.split("\n")) {
    if (/^\s*```/.test(line)) inFence = !inFence;
    const heading = inFence ? null : /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = headingSlug(heading[1] as string);
    let anchor = slug;
    for (let count = 1; anchors.has(anchor); count += 1) anchor = `${slug}-${count}`;
    anchors.add(anchor);
  }
  return anchors;
}

/**
 * The problems of the relative links of the Markdown file `file` (absolute): a target that does not
 * exist, or a `#anchor` no heading of the target (a Markdown file) has. Web links are not followed.
 */
export function brokenLinks(file: string, root: string): string[] {
  const markdown = readFileSync(file, "utf8");
  const problems: string[] = [];
  for (const target of linkTargets(markdown)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
    const [path = "", anchor] = target.split("#", 2);
    const resolved = path === "" ? file : resolve(dirname(file), decodeURI(path));
    const where = relative(root, file);
    if (!existsSync(resolved)) {
      problems.push(`${where}: links ${target}, which does not exist`);
      continue;
    }
    if (anchor !== undefined && resolved.endsWith(".md")) {
      if (!headingAnchors(readFileSync(resolved, "utf8")).has(anchor)) {
        problems.push(`${where}: links ${target}, but ${relative(root, resolved)} has no heading #${anchor}`);
      }
    }
  }
  return problems;
}

/** The docs pages of an app (`docs/*.md`), relative to the app. */
export function docsPages(appDir: string): string[] {
  const docs = join(appDir, "docs");
  if (!existsSync(docs)) return [];
  return readdirSync(docs)
    .filter((name) => name.endsWith(".md") && statSync(join(docs, name)).isFile())
    .map((name) => `docs/${name}`)
    .sort();
}

/**
 * Every problem of the app at `appDir`: its README over the line limit, a docs page it links that does
 * not exist (a broken link), a docs page it does not link, a broken link in the README, a docs page or
 * the app's BENCHMARKS.md.
 */
export function appDocsProblems(appDir: string, root: string): string[] {
  const readmePath = join(appDir, "README.md");
  const where = relative(root, readmePath);
  if (!existsSync(readmePath)) return [`${relative(root, appDir)} has no README.md`];
  const readme = readFileSync(readmePath, "utf8");
  const problems: string[] = [];
  const lines = lineCount(readme);
  if (lines >= maxReadmeLines) {
    problems.push(`${where} has ${lines} lines; a README for users stays under ${maxReadmeLines}`);
  }
  const linked = new Set(
    linkTargets(readme)
      .map((target) => target.split("#")[0] as string)
      .filter((path) => /^docs\/[^/]+\.md$/.test(path)),
  );
  for (const page of docsPages(appDir)) {
    if (!linked.has(page)) problems.push(`${where} does not link ${page}`);
  }
  const files = [readmePath, ...docsPages(appDir).map((page) => join(appDir, page))];
  if (existsSync(join(appDir, "BENCHMARKS.md"))) files.push(join(appDir, "BENCHMARKS.md"));
  for (const file of files) problems.push(...brokenLinks(file, root));
  return problems;
}
