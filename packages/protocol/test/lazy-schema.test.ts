import { describe, expect, test } from "vitest";
import { z } from "zod";
import { lazySchema } from "../src/lazy-schema.js";
import { SessionRecord, TurnPhase } from "../src/turn.js";

function counted<Schema>(build: () => Schema) {
  const calls = { count: 0 };
  const schema = lazySchema(() => {
    calls.count += 1;
    return build() as Schema & object;
  });
  return { schema, calls };
}

const eagerPoint = () => z.strictObject({ x: z.number().int(), label: z.string().min(1).optional() });

describe("lazySchema", () => {
  test("builds nothing until first used, then exactly once", () => {
    const { schema, calls } = counted(eagerPoint);
    expect(calls.count).toBe(0);
    expect(schema.parse({ x: 1 })).toEqual({ x: 1 });
    expect(schema.safeParse({ x: 1.5 }).success).toBe(false);
    expect(schema.shape.x).toBeInstanceOf(z.ZodNumber);
    expect(calls.count).toBe(1);
  });

  test("stands for the built schema: instanceof, in, keys, methods that derive new schemas", () => {
    const { schema } = counted(eagerPoint);
    const eager = eagerPoint();
    expect(schema).toBeInstanceOf(z.ZodObject);
    expect(schema).toBeInstanceOf(z.ZodType);
    expect("_zod" in schema).toBe(true);
    expect(Object.keys(schema.shape)).toEqual(["x", "label"]);
    expect(schema.extend({ y: z.number() }).parse({ x: 1, y: 2 })).toEqual({ x: 1, y: 2 });
    expect(schema.pick({ x: true }).safeParse({ x: 1, label: "a" }).success).toBe(false);
    expect(z.toJSONSchema(schema)).toEqual(z.toJSONSchema(eager));
    expect(z.prettifyError(schema.safeParse({ x: "1" }).error as z.ZodError)).toBe(
      z.prettifyError(eager.safeParse({ x: "1" }).error as z.ZodError),
    );
  });

  test("works nested in other schemas, eager or lazy, and inside unions", () => {
    const { schema: point, calls } = counted(eagerPoint);
    const { schema: segment } = counted(() => z.strictObject({ from: point, to: point.optional() }));
    const either = z.union([point, z.literal("origin")]);
    expect(calls.count).toBe(0);
    expect(segment.parse({ from: { x: 1 } })).toEqual({ from: { x: 1 } });
    expect(either.parse("origin")).toBe("origin");
    expect(either.safeParse({ x: "no" }).success).toBe(false);
    expect(z.toJSONSchema(segment)).toMatchObject({ properties: { from: { type: "object" } } });
    expect(calls.count).toBe(1);
  });

  test("a builder that throws throws at first use, every use, and names its problem", () => {
    const broken = lazySchema((): z.ZodString => {
      throw new Error("schema under construction");
    });
    expect(() => broken.parse("a")).toThrow("schema under construction");
    expect(() => broken.parse("a")).toThrow("schema under construction");
  });

  test("protocol's own schemas behave as built ones", () => {
    expect(TurnPhase.options).toContain("interrupted");
    expect(SessionRecord.safeParse({ id: "s1" }).success).toBe(false);
  });
});
