import { maxSearchPageSize, RenameSessionRequest, type SessionSearchQuery } from "@bridgeworks/protocol";
import { sendJson as send } from "@bridgeworks/runtime";
import type { TurnJournal } from "@bridgeworks/turn-journal";
import type { SessionStore } from "../session-store.js";
import { ApiError } from "./api-error.js";
import { readBody } from "./body.js";
import type { Route } from "./routes.js";

export interface SearchRouteDeps {
  journal: TurnJournal;
  sessions: SessionStore;
}

/** A session's title (rename) and the full-text search of titles, prompts and events. */
export function searchRoutes({ journal, sessions }: SearchRouteDeps): Route[] {
  return [
    {
      method: "POST",
      pattern: /^\/v1\/sessions\/([^/]+)\/rename$/,
      // What a person reads a session by (the list, the inbox, a notification): not an agent's to change.
      decides: "rename a session",
      handler: async (q, r, [id]) => {
        const { title } = await readBody(q, RenameSessionRequest);
        send(r, 200, sessions.present(journal.sessions.renameSession(id!, title)));
      },
    },
    {
      method: "GET",
      pattern: /^\/v1\/search$/,
      handler: async (q, r) => send(r, 200, journal.sessions.searchSessions(searchQuery(q.url))),
    },
  ];
}

/** `?q=&limit=&cursor=`; a missing query or a bad limit is a 400 naming it. */
function searchQuery(url: string | undefined): SessionSearchQuery {
  const params = new URL(url ?? "/", "http://x").searchParams;
  const query = params.get("q")?.trim() ?? "";
  if (query === "")
    throw new ApiError("bad_request", "q: the search query must not be empty", { field: "q" });
  if (query.length > 500)
    throw new ApiError("bad_request", "q: the search query must be at most 500 characters", { field: "q" });
  const search: SessionSearchQuery = { query };
  const limit = params.get("limit");
  if (limit !== null) {
    if (!/^\d{1,3}$/.test(limit) || Number(limit) < 1 || Number(limit) > maxSearchPageSize) {
      throw new ApiError("bad_request", `limit: must be an integer from 1 to ${maxSearchPageSize}`, {
        field: "limit",
      });
    }
    search.limit = Number(limit);
  }
  const cursor = params.get("cursor");
  if (cursor !== null && cursor !== "") search.cursor = cursor;
  return search;
}
