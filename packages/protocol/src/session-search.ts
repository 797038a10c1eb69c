import { z } from "zod";
import { lazySchema } from "./lazy-schema.js";
import { JournalId } from "./turn.js";

export const maxSessionTitleLength = 200;

/** The first control character of `text` (C0, DEL, C1, line and paragraph separators), if any. */
function firstControlCharacter(text: string): { at: number; code: string } | undefined {
  const match = /[\p{Cc}\u2028\u2029]/u.exec(text);
  if (match === null) return undefined;
  const code = match[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
  return { at: match.index, code: `U+${code}` };
}

/**
 * A session's title as a person gives it: 1-200 characters on one line, without control characters
 * (a newline, a tab or an escape would break the lists and the terminal that show it). Spaces at
 * either end are dropped.
 */
export const SessionTitle = lazySchema(() =>
  z
    .string({ error: "title must be a string" })
    .trim()
    .min(1, "title must not be empty")
    .max(maxSessionTitleLength, `title must be at most ${maxSessionTitleLength} characters`)
    .superRefine((title, context) => {
      const control = firstControlCharacter(title);
      if (control !== undefined)
        context.addIssue({
          code: "custom",
          message: `title must not contain control characters (${control.code} at character ${control.at + 1})`,
        });
    }),
);
export type SessionTitle = z.infer<typeof SessionTitle>;

/** `POST /v1/sessions/{id}/rename`. */
export const RenameSessionRequest = lazySchema(() => z.strictObject({ title: SessionTitle }));
export type RenameSessionRequest = z.infer<typeof RenameSessionRequest>;

export const maxSearchPageSize = 50;

/**
 * A full-text search of the sessions' titles, prompts and the text of their turns' events (SQLite
 * FTS5 query syntax: words, "a phrase", prefix*, AND / OR / NOT, NEAR). `cursor` is the `nextCursor`
 * of the page before.
 */
export const SessionSearchQuery = lazySchema(() =>
  z.strictObject({
    query: z
      .string()
      .trim()
      .min(1, "query must not be empty")
      .max(500, "query must be at most 500 characters"),
    limit: z.number().int().min(1).max(maxSearchPageSize).optional(),
    cursor: z.string().min(1).max(200).optional(),
  }),
);
export type SessionSearchQuery = z.infer<typeof SessionSearchQuery>;

/** Where a hit was found: the session's title, a turn's prompt, or one of a turn's events. */
export const SearchHitSource = lazySchema(() => z.enum(["title", "prompt", "event"]));
export type SearchHitSource = z.infer<typeof SearchHitSource>;

/** A piece of a snippet; `match` marks the words the query matched. */
export const SnippetPart = lazySchema(() =>
  z.strictObject({ text: z.string(), match: z.literal(true).optional() }),
);
export type SnippetPart = z.infer<typeof SnippetPart>;

export const SessionSearchHit = lazySchema(() =>
  z.strictObject({
    sessionId: JournalId,
    /** The session's title now (absent until it has one). */
    title: z.string().optional(),
    source: SearchHitSource,
    turnId: JournalId.optional(),
    /** The event's index in its turn (source `event`). */
    eventIndex: z.number().int().nonnegative().optional(),
    snippet: z.array(SnippetPart),
  }),
);
export type SessionSearchHit = z.infer<typeof SessionSearchHit>;

/** `GET /v1/search`: one page of hits, best first; `nextCursor` asks for the next (`?cursor=`). */
export const SessionSearchPage = lazySchema(() =>
  z.strictObject({
    hits: z.array(SessionSearchHit),
    nextCursor: z.string().optional(),
  }),
);
export type SessionSearchPage = z.infer<typeof SessionSearchPage>;
