// What a failed call tells its client and the log, over tRPC's HTTP adapter: invalid input gets one line saying
// what to fix (the issues stay in `data`); a call whose client hung up is no internal error.
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import type { TRPCError } from "@trpc/server";
import { createHTTPServer } from "@trpc/server/adapters/standalone";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { testContext } from "../test/context.js";
import { appRouter } from "./root.js";

interface LogLine {
  level: number;
  msg: string;
  err?: { type?: string };
}

const logs: LogLine[] = [];
const errorsSeen: TRPCError[] = [];
let t: Awaited<ReturnType<typeof testContext>>;
let server: ReturnType<typeof createHTTPServer>;
let url: string;

beforeAll(async () => {
  const logger = pino({ level: "debug" }, { write: (line: string) => void logs.push(JSON.parse(line)) });
  t = await testContext({ logger });
  server = createHTTPServer({
    router: appRouter,
    createContext: () => t.ctx,
    // As the API's server does (server.ts): an INTERNAL_SERVER_ERROR seen here is logged at error.
    onError: ({ error }) => void errorsSeen.push(error),
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await t.close();
});

interface ErrorBody {
  error: {
    message: string;
    data: {
      code: string;
      zodError: { fieldErrors: Record<string, string[]> } | null;
      issues?: { path: string[]; code: string; message: string }[];
    };
  };
}

async function post(path: string, input: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(`${url}/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(input),
    ...(signal ? { signal } : {}),
  });
}

describe("invalid input", () => {
  it("is answered 400 with a one-line message naming each field, the issues in data", async () => {
    const res = await post("stock.deduct", { productId: true, mode: "nope" });
    expect(res.status).toBe(400);
    const { error } = (await res.json()) as ErrorBody;
    expect(error.message).not.toContain("\n");
    expect(error.message).toMatch(/^productId: expected a positive whole number or 1-64 characters/);
    expect(error.message).toMatch(/; mode: Invalid option: expected one of "none"\|/);
    expect(error.data.code).toBe("BAD_REQUEST");
    expect(Object.keys(error.data.zodError?.fieldErrors ?? {}).sort()).toEqual(["mode", "productId"]);
    expect(error.data.issues?.map((i) => i.path)).toEqual([["productId"], ["mode"]]);
  });

  it("names nested fields by their path and the input itself as `input`", async () => {
    const nested = (await (
      await post("order.submit", { orderId: "o1", items: [{ productId: "{x}" }] })
    ).json()) as ErrorBody;
    expect(nested.error.message).toBe("items.0.productId: expected 1-64 characters of [A-Za-z0-9_-]");
    const extra = (await (
      await post("stock.deduct", { productId: "1001", mode: "none", x: 1 })
    ).json()) as ErrorBody;
    expect(extra.error.message).toBe('input: Unrecognized key: "x"');
  });
});

describe("a call whose client went away", () => {
  it("is logged at debug as `client went away`, not as an internal error", async () => {
    await t.caller.stock.reset({ productId: "1001", qty: 100 });
    const before = logs.length;
    const seen = errorsSeen.length;
    const ctl = new AbortController();
    const call = post("stock.deduct", { productId: "1001", mode: "atomic", workMs: 1_000 }, ctl.signal);
    await sleep(200);
    ctl.abort();
    await expect(call).rejects.toThrow();
    await vi.waitFor(() => expect(errorsSeen.length).toBe(seen + 1), { timeout: 3_000, interval: 20 });
    const lines = logs.slice(before);
    expect(lines.filter((l) => l.level >= 40)).toEqual([]);
    expect(errorsSeen.at(-1)?.code).toBe("CLIENT_CLOSED_REQUEST");
    expect(lines).toContainEqual(expect.objectContaining({ level: 20, msg: "client went away" }));
  });
});
