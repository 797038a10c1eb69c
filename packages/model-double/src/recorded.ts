/** What a request was routed to. */
export type RequestKind = "anthropic" | "openai" | "count_tokens" | "unknown";

/** A request as step predicates see it. */
export interface MatchableRequest {
  /** Position in `requests` (0-based); error messages call it `request #index`. */
  readonly index: number;
  readonly api: RequestKind;
  readonly method: string;
  /** Path without the query string. */
  readonly path: string;
  readonly query: Readonly<Record<string, string>>;
  /** Lower-case header names; repeated headers joined with ", ". */
  readonly headers: Readonly<Record<string, string>>;
  /** Parsed JSON body; the raw text when it is not JSON; `undefined` when empty. */
  readonly body: unknown;
  /** Milliseconds since the epoch, from the injected clock. */
  readonly receivedAt: number;
}

export interface RecordedToolCall {
  readonly id: string;
  readonly name: string;
  readonly namespace?: string;
  readonly input: Readonly<Record<string, unknown>>;
}

/** What the double answered, known before the first byte is streamed. */
export interface RecordedResponse {
  readonly status: number;
  /** Index of the script step that answered, `null` when none did. */
  readonly stepIndex: number | null;
  /** `msg_…` (anthropic) or `resp_…` (openai) id of a scripted answer. */
  readonly messageId?: string;
  /** Tool calls in order, with their generated or scripted ids and resolved names. */
  readonly toolCalls: readonly RecordedToolCall[];
  /** Set when the double could not follow the script for this request. */
  readonly failure?: string;
  /** The usage the answer reports (scripted, modelled by `promptCache`, or estimated). */
  readonly usage?: {
    readonly input_tokens: number;
    readonly output_tokens: number;
    readonly cache_read_input_tokens: number;
    readonly cache_creation_input_tokens: number;
  };
}

export interface RecordedRequest extends MatchableRequest {
  readonly response: RecordedResponse;
}
