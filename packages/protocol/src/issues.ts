import type { z } from "zod";

// How a refused value reads, for every schema here and every caller that parses with one:
// `field: problem`, one per issue, the field written as the caller would type it.

export interface DescribeIssuesOptions {
  /** What to call the value itself when an issue has no path (`arguments`, `body`, `stdin`). */
  root?: string;
  /** Put before every field (`session.env`): the name of the value the schema parsed. */
  prefix?: string;
  /** How an unknown key reads; default `is not allowed`. */
  unknownKey?: string;
}

export interface IssueProblem {
  /** The field to blame, e.g. `env.1PASSWORD`, `steps[0].response`; the root's name when none. */
  field: string;
  problem: string;
}

/** `steps[0].response.events`: indices in brackets, keys dotted. */
export function formatIssuePath(path: readonly PropertyKey[]): string {
  return path
    .map((segment, position) => {
      if (typeof segment === "number") return `[${segment}]`;
      const name = String(segment);
      return position === 0 ? name : `.${name}`;
    })
    .join("");
}

/** Every issue as `{field, problem}`; an unknown-keys issue gives one entry per key. */
export function issueProblems(
  issues: readonly z.core.$ZodIssue[],
  options: DescribeIssuesOptions = {},
): IssueProblem[] {
  const name = (path: readonly PropertyKey[]) => {
    const field = [options.prefix, formatIssuePath(path)].filter(Boolean).join(".");
    return field || options.root || "value";
  };
  return issues.flatMap((issue) =>
    issue.code === "unrecognized_keys"
      ? issue.keys.map((key) => ({
          field: name([...issue.path, key]),
          problem: options.unknownKey ?? "is not allowed",
        }))
      : [{ field: name(issue.path), problem: readableProblem(issue) }],
  );
}

/** `timeoutSeconds: must be at most 60; cursor: is required (string)`. */
export function describeIssues(
  issues: readonly z.core.$ZodIssue[],
  options: DescribeIssuesOptions = {},
): string {
  return issueProblems(issues, options)
    .map(({ field, problem }) => `${field}: ${problem}`)
    .join("; ");
}

function readableProblem(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case "invalid_type": {
      // Only a parse with `reportInput: true` says what was there; without it zod's own words stay.
      if (!("input" in issue)) return issue.message;
      const expected = issue.expected === "int" ? "integer" : issue.expected;
      return issue.input === undefined
        ? `is required (${expected})`
        : `must be ${article(expected)}, got ${describeValue(issue.input)}`;
    }
    case "too_small":
      return issue.origin === "number" || issue.origin === "int" || issue.origin === "bigint"
        ? `must be at least ${String(issue.minimum)}`
        : issue.message;
    case "too_big":
      return issue.origin === "number" || issue.origin === "int" || issue.origin === "bigint"
        ? `must be at most ${String(issue.maximum)}`
        : issue.message;
    case "invalid_union": {
      // A union hides the useful detail one level down: show the branch that got furthest.
      const deepest = issue.errors
        .flat()
        .filter((inner) => inner.code !== "invalid_type" || inner.path.length > 0)
        .sort((a, b) => b.path.length - a.path.length)[0];
      return deepest ? `${formatIssuePath(deepest.path)} ${deepest.message}`.trim() : issue.message;
    }
    default:
      return issue.message;
  }
}

function article(expected: string): string {
  return /^[aeiou]/.test(expected) ? `an ${expected}` : `a ${expected}`;
}

function describeValue(value: unknown): string {
  if (typeof value === "string") return `the string ${JSON.stringify(value.slice(0, 40))}`;
  if (typeof value === "number")
    return Number.isInteger(value) ? `the integer ${value}` : `the number ${value}`;
  if (value === null) return "null";
  return Array.isArray(value) ? "an array" : typeof value;
}
