// Generators of inputs that are invalid by construction for each tRPC procedure, so that none of
// them may change data: one field made wrong, an unknown key, junk at the root, or a broken body.
import fc from "fast-check";

type Field =
  | { kind: "id" }
  | { kind: "prefix" }
  | { kind: "int"; min: number; max: number }
  | { kind: "number"; min: number; max: number }
  | { kind: "enum"; values: readonly string[] };

export interface Procedure {
  path: string;
  type: "query" | "mutation" | "subscription";
  /** A valid input; it is never sent as is. */
  base: Record<string, unknown> | undefined;
  fields: Record<string, Field>;
}

export interface BadRequest {
  what: string;
  /** JSON text of the input, or raw (possibly broken) text. */
  text: string | undefined;
}

const id: Field = { kind: "id" };
const int = (min: number, max: number): Field => ({ kind: "int", min, max });
const modes = { kind: "enum", values: ["none", "local", "redis", "redlock", "postgres", "atomic"] } as const;

export const procedures: Procedure[] = [
  { path: "system.info", type: "query", base: undefined, fields: {} },
  { path: "stock.get", type: "query", base: { productId: "fz-1" }, fields: { productId: id } },
  {
    path: "stock.reset",
    type: "mutation",
    base: { productId: "fz-1", qty: 5 },
    fields: { productId: id, qty: int(0, 1_000_000) },
  },
  {
    path: "stock.deduct",
    type: "mutation",
    base: { productId: "fz-1", mode: "atomic" },
    fields: { productId: id, quantity: int(1, 1000), mode: modes, workMs: int(0, 5000) },
  },
  {
    path: "order.submit",
    type: "mutation",
    base: { orderId: "fz-o2", productId: "fz-1", quantity: 1 },
    fields: { orderId: id, productId: id, quantity: int(1, 1000) },
  },
  { path: "order.get", type: "query", base: { orderId: "fz-o1" }, fields: { orderId: id } },
  { path: "order.list", type: "query", base: { limit: 10 }, fields: { limit: int(1, 200) } },
  { path: "locks.list", type: "query", base: { prefix: "" }, fields: { prefix: { kind: "prefix" } } },
  {
    path: "locks.watch",
    type: "subscription",
    base: { intervalMs: 200 },
    // intervalMs is accepted and ignored (one observer per instance pushes changes), but still bounded.
    fields: { prefix: { kind: "prefix" }, intervalMs: int(0, 60_000) },
  },
  {
    path: "demo.burst.start",
    type: "mutation",
    base: { mode: "atomic", requests: 5 },
    fields: {
      productId: id,
      requests: int(1, 1000),
      initialStock: int(0, 100_000),
      mode: modes,
      workMs: int(0, 1000),
    },
  },
  {
    path: "demo.runs.watch",
    type: "subscription",
    base: { runId: "0123456789abcdef" },
    fields: { runId: id },
  },
  {
    path: "demo.scenario.start",
    type: "mutation",
    base: { name: "watchdog" },
    fields: {
      name: { kind: "enum", values: ["watchdog", "reentrancy", "misdelete", "fencing", "crash"] },
      timeScale: { kind: "number", min: 0.05, max: 1 },
    },
  },
  {
    path: "demo.readWrite.run",
    type: "mutation",
    base: { timeScale: 0.25 },
    fields: { timeScale: { kind: "number", min: 0.25, max: 1 } },
  },
  { path: "jobs.runs", type: "query", base: { limit: 5 }, fields: { limit: int(1, 100) } },
];

const FORBIDDEN = ["{", "}", "*", "?", "[", "]", " ", "/", "\\", "\u0000", "é", "\n", ",", "'", '"', "%"];
/** Anything JSON can carry except undefined (which a default would turn valid). */
const junk = fc.anything({ maxDepth: 2 }).filter((v) => v !== undefined);
const notNumber = fc.oneof(
  fc.string(),
  fc.boolean(),
  fc.constant(null),
  fc.array(junk, { maxLength: 3 }),
  fc.object(),
);
const huge = fc.integer({ min: 70_000, max: 200_000 }).map((n) => "x".repeat(n));
const withForbidden = fc
  .tuple(fc.string({ maxLength: 20 }), fc.constantFrom(...FORBIDDEN), fc.string({ maxLength: 20 }))
  .map(([a, c, b]) => `${a}${c}${b}`);

function badValue(f: Field): fc.Arbitrary<unknown> {
  switch (f.kind) {
    case "id":
      return fc.oneof(
        withForbidden,
        fc.string({ minLength: 65, maxLength: 300 }),
        fc.constant(""),
        huge,
        fc.constantFrom("*", "?", "{a}", "a*", "[ab]", "{1001}", "1001}", "x{", "**"),
        // Positive whole numbers are ids (the seed's `1001`); zero, negatives, fractions and unsafe ones are not.
        fc.integer({ max: 0 }),
        fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Number.isInteger(x)),
        fc.constantFrom(2 ** 53, 2 ** 53 + 2, 1e308),
        notNumber.filter((v) => typeof v !== "string"),
      );
    case "prefix":
      return fc.oneof(
        withForbidden,
        fc.string({ minLength: 201, maxLength: 400 }),
        huge,
        fc.integer(),
        fc.constant(null),
      );
    case "int":
      return fc.oneof(
        fc.integer({ max: f.min - 1 }),
        fc.integer({ min: f.max + 1 }),
        fc.constantFrom(1e308, -1e308, 2 ** 53 + 2, -(2 ** 53) - 2, Number.MAX_VALUE),
        fc.double({ noNaN: true, noDefaultInfinity: true }).filter((x) => !Number.isInteger(x)),
        notNumber,
      );
    case "number":
      return fc.oneof(
        fc.double({ max: f.min, maxExcluded: true, noNaN: true }),
        fc.double({ min: f.max, minExcluded: true, noNaN: true }),
        notNumber,
      );
    case "enum":
      return fc.oneof(
        fc.string().filter((s) => !f.values.includes(s)),
        notNumber,
        fc.constantFrom("NONE", "redis ", "*"),
      );
  }
}

/** Inputs for one procedure; every one is invalid unless the procedure takes no input. */
export function badRequests(p: Procedure): fc.Arbitrary<BadRequest> {
  const json = (what: string) => (v: unknown) => ({ what, text: JSON.stringify(v) });
  const root = junk
    .filter((v) => typeof v !== "object" || v === null || Array.isArray(v))
    .map(json("wrong type at the root"));
  const unknownKey = fc
    .tuple(fc.constantFrom("owner", "ownerId", "token", "__proto__", "constructor", "extra", "lock"), junk)
    .map(([k, v]) => ({ what: `unknown key ${k}`, text: JSON.stringify({ ...p.base, [k]: v }) }));
  const raw = fc.oneof(
    fc.string().map((s) => ({ what: "invalid JSON", text: `{"${s}` })),
    fc.constant({ what: "NaN literal", text: JSON.stringify(p.base ?? {}).replace(/}$/, ',"n":NaN}') }),
    fc.constant({ what: "Infinity literal", text: `{"x":Infinity}` }),
    fc.constant({ what: "trailing garbage", text: `${JSON.stringify(p.base ?? {})}}` }),
    huge.map((s) => ({ what: "oversized body", text: JSON.stringify({ ...p.base, pad: s }) })),
  );
  const fields = Object.entries(p.fields);
  const arbs: fc.Arbitrary<BadRequest>[] = [root, unknownKey, raw];
  if (fields.length > 0) {
    arbs.push(
      fc
        .constantFrom(...fields)
        .chain(([name, f]) =>
          badValue(f).map((v) => ({ what: `bad ${name}`, text: JSON.stringify({ ...p.base, [name]: v }) })),
        ),
    );
  }
  // system.info ignores its input: anything goes, and nothing may break.
  if (p.base === undefined) arbs.push(junk.map(json("anything")));
  return fc.oneof(...arbs);
}
