import { ApiError } from "./api-error.js";

/**
 * `decodeURIComponent` for a request path (or a part of one): a malformed percent-escape
 * (`%E0%A4%A`, `%zz`) is the caller's mistake, a 400 naming the path, never a 500.
 */
export function decodePathPart(raw: string, path: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new ApiError("bad_request", `the path ${JSON.stringify(path)} has a malformed percent-escape`);
  }
}
