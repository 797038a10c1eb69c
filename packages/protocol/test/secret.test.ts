import { describe, expect, expectTypeOf, test } from "vitest";
import {
  openSecretRequestStatuses,
  SecretRequest,
  SecretRequestDraft,
  SecretRequestStatus,
  SecretResolution,
  type SecretResolvedEvent,
  secretValueMinLength,
  secretValueProblem,
} from "../src/index.js";

const request: SecretRequest = {
  id: "01a22b01-0000-7000-8000-00000000000a",
  turnId: "01a22b00-fc7b-7028-a065-299d05fe18e9",
  sessionId: "mt9qcahn-oldcn9",
  toolCallKey: "toolu_01HZ8xWf3",
  name: "GITHUB_TOKEN",
  prompt: "Paste a GitHub token with repo scope",
  status: "pending",
  bridgeGeneration: 4,
  createdAt: "2026-11-30T12:00:00.000Z",
  updatedAt: "2026-11-30T12:00:00.000Z",
};

function messages(result: { error?: { issues: { path: PropertyKey[]; message: string }[] } }): string[] {
  return result.error?.issues.map((issue) => `${issue.path.join(".")}: ${issue.message}`) ?? [];
}

describe("SecretRequest", () => {
  test("accepts metadata of a pending and of an answered request", () => {
    expect(SecretRequest.parse(request)).toEqual(request);
    const answered = { ...request, status: "submitted", resolvedAt: "2026-11-30T12:01:00.000Z" };
    expect(SecretRequest.parse(answered)).toEqual(answered);
  });

  test("refuses any object carrying the secret itself, naming the field", () => {
    for (const field of ["value", "secret", "bytes", "credential"]) {
      expect(messages(SecretRequest.safeParse({ ...request, [field]: "ghp_x" }))).toEqual([
        `: Unrecognized key: "${field}"`,
      ]);
    }
  });

  test("refuses bad metadata, naming each field", () => {
    expect(
      messages(
        SecretRequest.safeParse({ ...request, status: "answered", toolCallKey: "", bridgeGeneration: -1 }),
      ),
    ).toEqual([
      "toolCallKey: toolCallKey must not be empty",
      expect.stringMatching(/^status: Invalid option/),
      "bridgeGeneration: Too small: expected number to be >=0",
    ]);
  });
});

describe("SecretRequestDraft and SecretResolution", () => {
  test("a draft is metadata only", () => {
    const draft = { toolCallKey: "call_9", name: "NPM_TOKEN", prompt: "npm token?" };
    expect(SecretRequestDraft.parse(draft)).toEqual(draft);
    expect(messages(SecretRequestDraft.safeParse({ ...draft, value: "npm_x" }))).toEqual([
      ': Unrecognized key: "value"',
    ]);
    expect(messages(SecretRequestDraft.safeParse({ ...draft, name: "" }))).toEqual([
      "name: secret name must not be empty",
    ]);
    expectTypeOf<keyof SecretRequestDraft>().toEqualTypeOf<"toolCallKey" | "name" | "prompt">();
  });

  test("a resolution is a final status, never a value", () => {
    expect(SecretResolution.options).toEqual(["submitted", "cancelled", "expired"]);
    expect(SecretResolution.safeParse("ghp_x").success).toBe(false);
    expect(SecretResolution.safeParse({ status: "submitted", value: "x" }).success).toBe(false);
    expect(openSecretRequestStatuses).toEqual(["pending", "orphaned"]);
  });

  test("the secret.resolved event names exactly the statuses a request can leave pending for", () => {
    expectTypeOf<SecretResolvedEvent["status"]>().toEqualTypeOf<Exclude<SecretRequestStatus, "pending">>();
    expect(SecretRequestStatus.options.filter((status) => status !== "pending")).toEqual([
      "submitted",
      "cancelled",
      "expired",
      "orphaned",
    ]);
  });
});

describe("secretValueProblem", () => {
  test(`a value of fewer than ${secretValueMinLength} characters has a reason naming the minimum; a longer one none`, () => {
    expect(secretValueProblem("a".repeat(secretValueMinLength - 1))).toContain(
      `at least ${secretValueMinLength} characters`,
    );
    expect(secretValueProblem("")).toBeDefined();
    expect(secretValueProblem("a".repeat(secretValueMinLength))).toBeUndefined();
  });
});
