import { TRPCError } from "@trpc/server";
import { z } from "zod";
import { requestSignal } from "../http/request-signal.js";
import { readOrder } from "../orders/store.js";
import { submitOrder } from "../orders/submit.js";
import { id, idInput, stockDeductInput, stockMode } from "../schemas.js";
import { deduct } from "../stock/deduct.js";
import { readStock, resetStock } from "../stock/store.js";
import { adminProcedure, publicProcedure, router } from "../trpc.js";
import type { DeductRejectReason } from "../types.js";

/**
 * The seed article's REST endpoints (`/api/stock/deduct`, `/api/stock/status`, `/api/order/submit`),
 * same paths, status codes and JSON shapes, served by http/rest.ts through trpc-to-openapi. Each one calls
 * the services the tRPC procedures call; only the response shape is the seed's.
 */

const tags = ["seed"];
// trpc-to-openapi keeps one description per status code for the whole document, so they are shared here.
const ERRORS = {
  400: "Invalid input",
  401: "Admin token required (x-admin-token), when the API runs with ADMIN_TOKEN",
  404: "Not found: no such order, or a product with no stock yet; POST /api/stock/reset creates one",
  409: "The same order is being submitted right now, or its id was used for a different order",
  412: "The mode is unavailable on this instance",
  429: "Too many deducts already queued on this product",
  503: "Redis unavailable, or (deduct) the stock lock could not be had in time",
} as const;
const errors = (...codes: (keyof typeof ERRORS)[]) => Object.fromEntries(codes.map((c) => [c, ERRORS[c]]));
// The document cannot show a default given to a transformed schema, so the description says it.
const productId = id
  .default("1001")
  .meta({ description: 'Default 1001. 1001 and "1001" name the same product', examples: [1001] });
// The same bounds as stock.deduct.
const work = stockDeductInput.shape.workMs.unwrap();
const DECIMAL = /^-?[0-9]+$/;
/**
 * A whole number in [min, max], `fallback` when absent. From the query string it arrives as text, and only
 * plain decimal digits are read as a number: "0x10", "1e3", "" and " 5" are refused, naming the field. The
 * pipe also keeps off the adapter's own coercion, Number(value), which read "0x10" as 16, "" as 0 and a body's
 * `null` as 0. The default sits inside the pipe because outside it the document would not show it.
 */
const wholeNumber = (min: number, max: number, fallback: number) =>
  z.preprocess(
    (value) => (typeof value === "string" && DECIMAL.test(value) ? Number(value) : value),
    z
      .int({
        error: (issue) =>
          typeof issue.input === "string"
            ? `expected a whole number in decimal digits, like 250; got ${JSON.stringify(issue.input.slice(0, 20))}`
            : undefined,
      })
      .min(min)
      .max(max)
      .default(fallback),
  );

const noProduct = (productId: string) => `no product ${productId} (stock.reset creates one)`;

const UNAVAILABLE: Record<Exclude<DeductRejectReason, "sold-out">, string> = {
  "lock-timeout": "the stock lock could not be acquired in time; try again shortly",
  "lock-lost": "the stock lock was lost before the sale was written; nothing was sold, try again",
  "stale-token": "a newer lock holder wrote first; nothing was sold, try again",
};

const deductOutput = z.union([
  z.object({ success: z.literal(true), remainingStock: z.int() }),
  z.object({ success: z.literal(false), message: z.string() }),
]);

const stockRoutes = {
  deduct: publicProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/api/stock/deduct",
        tags,
        protect: false,
        summary: "Deduct one unit (the seed's flash sale)",
        description:
          "Input as query parameters, as the seed sends it (`?productId=1001`), as a JSON body, or both. " +
          "Sold out is a 200 with `success: false`; a lock that cannot be had in time is a 503.",
        errorResponses: errors(400, 404, 412, 429, 503),
      },
    })
    .input(
      z
        .strictObject({
          productId,
          mode: stockMode.default("redis"),
          workMs: wholeNumber(work.minValue ?? 0, work.maxValue ?? 0, 0).meta({
            description: "Simulated work between the stock check and the write, in ms",
          }),
        })
        .prefault({}),
    )
    .output(deductOutput)
    .mutation(async ({ ctx, input, signal: callSignal }) => {
      // trpc-to-openapi calls this without the request's signal: rest.ts hands it over on the context.
      // A client hanging up is turned into CLIENT_CLOSED_REQUEST by trpc.ts's clientGone, as on tRPC.
      const r = await deduct(ctx, { ...input, quantity: 1 }, callSignal ?? requestSignal(ctx));
      if (r.ok) return { success: true as const, remainingStock: r.stock };
      if (r.reason === "sold-out") return { success: false as const, message: "sold out" };
      throw new TRPCError({ code: "SERVICE_UNAVAILABLE", message: UNAVAILABLE[r.reason] });
    }),
  status: publicProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/api/stock/status",
        tags,
        protect: false,
        summary: "Current stock",
        errorResponses: errors(400, 404, 503),
      },
    })
    .input(z.strictObject({ productId }).prefault({}))
    .output(z.object({ stock: z.int() }))
    .query(async ({ ctx, input }) => {
      const stock = await readStock(ctx.redis, input.productId);
      // As deduct answers it (stock/known-products.ts): a stock of 0 would say the product exists and sold out.
      if (!stock.exists) throw new TRPCError({ code: "NOT_FOUND", message: noProduct(input.productId) });
      return { stock: stock.qty };
    }),
  reset: adminProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/api/stock/reset",
        tags,
        summary: "Set the stock (not in the seed, whose stock lived in memory until a restart)",
        description: "Needs the `x-admin-token` header when the API runs with `ADMIN_TOKEN`.",
        errorResponses: errors(400, 401, 503),
      },
    })
    .input(z.strictObject({ productId, stock: wholeNumber(0, 1_000_000, 100) }).prefault({}))
    .output(z.object({ stock: z.int() }))
    .mutation(async ({ ctx, input }) => ({
      stock: (await resetStock(ctx.redis, input.productId, input.stock)).qty,
    })),
};

const orderRoutes = {
  submit: publicProcedure
    .meta({
      openapi: {
        method: "POST",
        path: "/api/order/submit",
        tags,
        protect: false,
        summary: "Submit an order once (the seed's double-submit guard)",
        description:
          "A concurrent duplicate gets 409; a duplicate after the order was created gets it back with `replayed: true`, " +
          "and the same id with another productId or quantity gets 409. The product is not checked: the order takes no stock.",
        errorResponses: errors(400, 409, 503),
      },
    })
    .input(
      z.strictObject({
        orderId: idInput.meta({ description: '100001 and "100001" name the same order' }),
        productId,
        quantity: wholeNumber(1, 1000, 1),
      }),
    )
    .output(
      z.object({ success: z.literal(true), orderId: z.union([z.int(), z.string()]), replayed: z.boolean() }),
    )
    .mutation(async ({ ctx, input }) => {
      const { replayed } = await submitOrder(ctx, { ...input, orderId: String(input.orderId) });
      // Echoed as sent, like the seed: a number stays a number.
      return { success: true as const, orderId: input.orderId, replayed };
    }),
  status: publicProcedure
    .meta({
      openapi: {
        method: "GET",
        path: "/api/order/status",
        tags,
        protect: false,
        summary: "A stored order (not in the seed)",
        errorResponses: errors(400, 404, 503),
      },
    })
    .input(z.strictObject({ orderId: id }))
    .output(
      z.object({
        orderId: z.string(),
        productId: z.string(),
        quantity: z.int(),
        status: z.literal("created"),
        createdAt: z.int(),
      }),
    )
    .query(async ({ ctx, input }) => {
      const order = await readOrder(ctx.redis, input.orderId);
      if (!order) throw new TRPCError({ code: "NOT_FOUND", message: `order ${input.orderId} not found` });
      const { orderId, productId, quantity, status, createdAt } = order;
      return { orderId, productId, quantity, status, createdAt };
    }),
};

export const seedRouter = router({ stock: stockRoutes, order: orderRoutes });
