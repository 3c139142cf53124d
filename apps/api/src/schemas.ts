import { z } from "zod";

const NUMERIC_ID = "a numeric id must be a whole number from 1 to 2^53-1";
/** A JSON number past 2^53-1 has already lost digits when it is parsed: only a string carries it exactly. */
const UNSAFE_NUMERIC_ID =
  'a numeric id above 2^53-1 (9007199254740991) loses digits as a JSON number: send it as a string of digits, like "9223372036854775807"';
/** The seed's ids are C# `long`s. */
export const MAX_DIGIT_ID = 9_223_372_036_854_775_807n;
/** Digits, negative or not: the seed's `long` binding would read these as a number, so they must be one. */
const NUMBER_LIKE = /^-?[0-9]+$/;
const CANONICAL = /^[1-9][0-9]*$/;
const DIGITS_RULE = `a whole number from 1 to ${MAX_DIGIT_ID} in plain digits (no sign, no leading zeros), or a name of letters, digits, _ and - that is not all digits`;

/**
 * An id as clients send it: a string without braces, globs or separators, or a positive whole number
 * as in the seed's `productId=1001` and `{ "orderId": 100001 }`. A string of digits is that number, written
 * plainly: "0", "-5" and "00100001" were keys of their own, so `orderId <= 0` went through and "00100001"
 * slipped past the double-submit guard of order 100001. Names that are not all digits ("demo-1") stay.
 */
export const idInput = z
  .union(
    [
      z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, "expected 1-64 characters of [A-Za-z0-9_-]"),
      z
        .int({ error: (issue) => (issue.code === "too_big" ? UNSAFE_NUMERIC_ID : NUMERIC_ID) })
        .min(1, { error: NUMERIC_ID }),
    ],
    { error: "expected a positive whole number or 1-64 characters of [A-Za-z0-9_-]" },
  )
  .superRefine((value, ctx) => {
    if (typeof value !== "string" || !NUMBER_LIKE.test(value)) return;
    if (CANONICAL.test(value) && BigInt(value) <= MAX_DIGIT_ID) return;
    ctx.addIssue({
      code: "custom",
      input: value,
      message: `expected ${DIGITS_RULE}; got ${JSON.stringify(value)}`,
    });
  });
/** Ids that end up inside Redis key names and lock resources: 1001 and "1001" name the same key. */
export const id = idInput.transform(String);

export const stockModes = ["none", "local", "redis", "redlock", "postgres", "atomic"] as const;
export const stockMode = z.enum(stockModes);
export type StockMode = z.infer<typeof stockMode>;

export const scenarioNames = ["watchdog", "reentrancy", "misdelete", "fencing", "crash"] as const;
export const scenarioName = z.enum(scenarioNames);
export type ScenarioName = z.infer<typeof scenarioName>;

const int = (min: number, max: number) => z.number().int().min(min).max(max);

/**
 * The longest simulated work a client may ask of one deduct. In the lock modes requests on a product run one
 * at a time, so this (with the per-product caps in stock/admission.ts) bounds how long a client can hold a
 * product for everyone else.
 */
export const MAX_WORK_MS = 1_000;
export const MAX_BURST_REQUESTS = 1_000;

export const stockGetInput = z.strictObject({ productId: id });
export const stockResetInput = z.strictObject({ productId: id, qty: int(0, 1_000_000).default(100) });
export const stockDeductInput = z.strictObject({
  productId: id,
  quantity: int(1, 1000).default(1),
  mode: stockMode,
  workMs: int(0, MAX_WORK_MS).default(0),
});

/** Most products one order may hold: each is a stock lock taken on the way in. */
export const MAX_ORDER_ITEMS = 20;
export const orderItemInput = z.strictObject({ productId: id, quantity: int(1, 1000).default(1) });

/**
 * Either the seed's single product (`productId`, `quantity`: an order record only, the double-submit guard), or
 * `items`: products taken from stock, all or none, under their stock locks taken together.
 */
export const orderSubmitInput = z
  .strictObject({
    orderId: id,
    productId: id.optional(),
    quantity: int(1, 1000).optional(),
    items: z
      .array(orderItemInput)
      .min(1, "expected 1 to 20 items")
      .max(MAX_ORDER_ITEMS, "expected 1 to 20 items")
      .optional(),
  })
  .superRefine((o, ctx) => {
    if ((o.productId === undefined) === (o.items === undefined)) {
      ctx.addIssue({
        code: "custom",
        message:
          o.productId === undefined
            ? "expected productId (and quantity) or items: the order names neither"
            : "expected productId (and quantity) or items, not both",
      });
    }
    if (o.items && o.quantity !== undefined) {
      ctx.addIssue({ code: "custom", path: ["quantity"], message: "with items, each item has its quantity" });
    }
    const ids = o.items?.map((i) => i.productId) ?? [];
    const twice = ids.find((x, i) => ids.indexOf(x) !== i);
    if (twice !== undefined) {
      ctx.addIssue({ code: "custom", path: ["items"], message: `product ${twice} is listed twice` });
    }
  });
export const orderGetInput = z.strictObject({ orderId: id });
export const orderListInput = z.strictObject({ limit: int(1, 200).default(50) }).default({ limit: 50 });

export const locksListInput = z
  .strictObject({
    /** Only locks whose resource starts with this (a plain prefix, not a glob). */
    prefix: z
      .string()
      .regex(/^[A-Za-z0-9:_.-]{0,200}$/, "expected up to 200 characters of [A-Za-z0-9:_.-]")
      .default(""),
  })
  .default({ prefix: "" });
export const locksWatchInput = z
  .strictObject({
    prefix: z
      .string()
      .regex(/^[A-Za-z0-9:_.-]{0,200}$/, "expected up to 200 characters of [A-Za-z0-9:_.-]")
      .default(""),
    /**
     * Accepted and ignored: one observer per instance pushes every change as it happens, so no client can make
     * Redis work harder (or ask for faster polls) with it.
     */
    intervalMs: int(0, 60_000).optional(),
    /** EventSource's Last-Event-ID on a reconnect; the stream starts again with a snapshot. */
    lastEventId: z.string().max(200).nullish(),
  })
  .default({ prefix: "" });

export const burstInput = z.strictObject({
  productId: id.default("1001"),
  requests: int(1, MAX_BURST_REQUESTS).default(200),
  initialStock: int(0, 100_000).default(100),
  mode: stockMode,
  workMs: int(0, MAX_WORK_MS).default(10),
});

const runId = z.string().regex(/^[0-9a-f]{16}$/, "expected a run id (16 hex characters)");
export const runWatchInput = z.strictObject({
  runId,
  /** Sent by EventSource on reconnect (tracked events): the last event received. */
  lastEventId: z
    .string()
    .regex(/^\d{1,9}$/)
    .nullish(),
});
export const runCancelInput = z.strictObject({ runId });

export const scenarioInput = z.strictObject({
  name: scenarioName,
  /** Scales every duration of the scenario (leases, work, pauses). 1 = the documented timings. */
  timeScale: z.number().min(0.05).max(1).default(1),
});

export const readWriteDemoInput = z
  .strictObject({
    /** Scales every duration of the story (about 2 s at 1). */
    timeScale: z.number().min(0.25).max(1).default(1),
  })
  .default({ timeScale: 1 });

export const jobsRunsInput = z.strictObject({ limit: int(1, 100).default(20) }).default({ limit: 20 });
