import { randomUUID } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import {
  type DecisionActor,
  SecretRequest,
  type SecretRequestDraft,
  type SecretResolution,
} from "@bridgeworks/protocol";
import Database from "better-sqlite3";
import { describe, expect, expectTypeOf, test } from "vitest";
import type { TurnJournal } from "../src/journal.js";
import { createTestJournal, eventTypes, runningTurn } from "./helpers.js";

const draft: SecretRequestDraft = { toolCallKey: "toolu_01A", name: "GITHUB_TOKEN", prompt: "Paste a token" };

describe("secret requests", () => {
  test("a request, its event and awaiting_secret commit together; the answer returns the turn to running", () => {
    const { journal, clock } = createTestJournal();
    journal.maintenance.bumpGeneration();
    const turn = runningTurn(journal);
    const request = journal.secrets.requestSecret(turn.id, draft);
    expect(SecretRequest.parse(request)).toEqual({
      id: expect.any(String),
      turnId: turn.id,
      sessionId: turn.sessionId,
      ...draft,
      status: "pending",
      bridgeGeneration: 1,
      createdAt: "2026-11-30T12:00:00.000Z",
      updatedAt: "2026-11-30T12:00:00.000Z",
    });
    expect(journal.turns.getTurn(turn.id)).toMatchObject({
      phase: "awaiting_secret",
      effects: ["tool_started"],
    });
    expect(journal.events.readEvents(turn.id, turn.eventCount).map((envelope) => envelope.event)).toEqual([
      { type: "secret.requested", requestId: request.id, ...draft },
      { type: "phase", phase: "awaiting_secret" },
    ]);

    clock.advance(2000);
    const submitted = journal.secrets.resolveSecretRequest(request.id, "submitted");
    expect(submitted).toMatchObject({ status: "submitted", resolvedAt: "2026-11-30T12:00:02.000Z" });
    expect(journal.turns.getTurn(turn.id)?.phase).toBe("running");
    expect(eventTypes(journal, turn.id).slice(-2)).toEqual(["secret.resolved", "phase"]);
    expect(journal.maintenance.checkConsistency()).toEqual([]);
  });

  test("the same tool call asking again gets the same request; two calls wait together", () => {
    const { journal } = createTestJournal();
    const turn = runningTurn(journal);
    const first = journal.secrets.requestSecret(turn.id, draft);
    expect(journal.secrets.requestSecret(turn.id, draft)).toEqual(first);
    const second = journal.secrets.requestSecret(turn.id, {
      ...draft,
      toolCallKey: "toolu_01B",
      name: "NPM_TOKEN",
    });
    expect(journal.secrets.listOpenSecretRequests(turn.sessionId).map((request) => request.id)).toEqual([
      first.id,
      second.id,
    ]);
    journal.secrets.resolveSecretRequest(first.id, "expired");
    expect(journal.turns.getTurn(turn.id)?.phase).toBe("awaiting_secret");
    journal.secrets.resolveSecretRequest(second.id, "cancelled");
    expect(journal.turns.getTurn(turn.id)?.phase).toBe("running");
    expect(journal.secrets.listOpenSecretRequests()).toEqual([]);
  });

  test("resolving twice to the same status is a no-op; to another status is refused", () => {
    const { journal } = createTestJournal();
    const turn = runningTurn(journal);
    const request = journal.secrets.requestSecret(turn.id, draft);
    journal.secrets.resolveSecretRequest(request.id, "submitted");
    const count = journal.turns.getTurn(turn.id)?.eventCount;
    expect(journal.secrets.resolveSecretRequest(request.id, "submitted").status).toBe("submitted");
    expect(journal.turns.getTurn(turn.id)?.eventCount).toBe(count);
    expect(() => journal.secrets.resolveSecretRequest(request.id, "cancelled")).toThrow(
      expect.objectContaining({ code: "secret_request_closed" }),
    );
    expect(() => journal.secrets.resolveSecretRequest("missing", "submitted")).toThrow(
      expect.objectContaining({ code: "secret_request_not_found" }),
    );
  });

  test("only a running turn asks; an ending turn cancels its pending requests", () => {
    const { journal } = createTestJournal();
    const turn = runningTurn(journal);
    const accepted = journal.turns.submitTurn(journal.sessions.createSession({ backend: "codex" }).id, {
      prompt: "x",
    });
    expect(() => journal.secrets.requestSecret(accepted.id, draft)).toThrow(
      expect.objectContaining({ code: "invalid_transition" }),
    );
    const request = journal.secrets.requestSecret(turn.id, draft);
    journal.turns.transition(turn.id, { phase: "completed" });
    expect(journal.secrets.getSecretRequest(request.id)?.status).toBe("cancelled");
    expect(eventTypes(journal, turn.id).slice(-2)).toEqual(["secret.resolved", "terminal"]);
  });

  test("an interrupted turn orphans its pending requests: still open, answerable, and not back to running", () => {
    const { journal } = createTestJournal();
    const turn = runningTurn(journal);
    const request = journal.secrets.requestSecret(turn.id, draft);
    journal.turns.transition(turn.id, {
      phase: "interrupted",
      error: { code: "daemon_restarted", message: "restart" },
    });
    expect(journal.secrets.listOpenSecretRequests()).toEqual([
      expect.objectContaining({ id: request.id, status: "orphaned", turnId: turn.id }),
    ]);
    const events = journal.turns.getTurn(turn.id)?.eventCount;
    expect(journal.secrets.resolveSecretRequest(request.id, "submitted")).toMatchObject({
      status: "submitted",
    });
    expect(journal.turns.getTurn(turn.id)).toMatchObject({ phase: "interrupted", eventCount: events });
  });

  test("survives a reopen with its state", () => {
    const { journal, reopen } = createTestJournal();
    const turn = runningTurn(journal);
    const request = journal.secrets.requestSecret(turn.id, draft);
    const reopened = reopen();
    expect(reopened.secrets.listOpenSecretRequests()).toEqual([request]);
  });
});

describe("secret values never reach the journal", () => {
  const tryAll = (attempts: (() => unknown)[]) =>
    attempts.map((attempt) => {
      try {
        attempt();
        return "accepted";
      } catch (error) {
        return (error as { code?: string }).code;
      }
    });

  function journalFiles(path: string): Buffer {
    return Buffer.concat(
      [path, `${path}-wal`, `${path}-shm`]
        .filter((file) => existsSync(file))
        .map((file) => readFileSync(file)),
    );
  }

  test("every API refuses an object carrying a value, and the db, WAL and shm never hold it", () => {
    const { journal, path } = createTestJournal();
    const secretValue = `ghp_${randomUUID()}`;
    const shownMarker = `prompt-${randomUUID()}`;
    const turn = runningTurn(journal);
    const request = journal.secrets.requestSecret(turn.id, { ...draft, prompt: shownMarker });
    const sneaky = journal.secrets as unknown as Record<string, (...args: unknown[]) => unknown>;

    const outcomes = tryAll([
      () =>
        journal.secrets.requestSecret(turn.id, {
          ...draft,
          toolCallKey: "k2",
          value: secretValue,
        } as SecretRequestDraft),
      () =>
        journal.secrets.requestSecret(turn.id, {
          ...draft,
          toolCallKey: "k3",
          secret: secretValue,
        } as SecretRequestDraft),
      () => journal.secrets.resolveSecretRequest(request.id, secretValue as SecretResolution),
      () =>
        sneaky.resolveSecretRequest?.(request.id, {
          status: "submitted",
          value: secretValue,
        } as unknown as string),
      () =>
        journal.events.appendEvents(turn.id, [
          {
            type: "secret.resolved",
            requestId: request.id,
            status: "submitted",
            value: secretValue,
          } as never,
        ]),
      () =>
        journal.events.appendEvents(turn.id, [
          { type: "warning", message: "m", value: secretValue } as never,
        ]),
      () => journal.turns.transition(turn.id, { phase: "completed", value: secretValue } as never),
      () => journal.sessions.createSession({ backend: "claude", secret: secretValue } as never),
      () => journal.turns.submitTurn(turn.sessionId, { prompt: "p", secret: secretValue } as never),
    ]);
    expect(outcomes).toEqual(Array(outcomes.length).fill("invalid_input"));

    journal.secrets.resolveSecretRequest(request.id, "submitted");
    journal.turns.transition(turn.id, { phase: "completed" });
    journal.events.flush();
    const live = journalFiles(path);
    expect(live.includes(shownMarker)).toBe(true);
    expect(live.includes(secretValue)).toBe(false);
    expect(live.includes(Buffer.from(secretValue, "utf16le"))).toBe(false);
    journal.maintenance.close();
    expect(journalFiles(path).includes(secretValue)).toBe(false);
  });

  test("the schema has no column and the API no parameter that could hold a value", () => {
    const { journal, path } = createTestJournal();
    journal.maintenance.close();
    const db = new Database(path, { readonly: true });
    try {
      const columns = (db.prepare("PRAGMA table_info(secret_requests)").all() as { name: string }[]).map(
        (column) => column.name,
      );
      expect(columns).not.toEqual(
        expect.arrayContaining([expect.stringMatching(/value|secret|bytes|credential/)]),
      );
    } finally {
      db.close();
    }
    // Checked by `tsc -p test`: the only inputs are metadata, a status and who answered.
    expectTypeOf<Parameters<TurnJournal["secrets"]["resolveSecretRequest"]>>().toEqualTypeOf<
      [requestId: string, resolution: SecretResolution, by?: DecisionActor]
    >();
    expectTypeOf<keyof SecretRequestDraft>().toEqualTypeOf<"toolCallKey" | "name" | "prompt">();
  });
});
