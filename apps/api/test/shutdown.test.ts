// SIGTERM on a real API process: requests in flight finish within the grace, and those still waiting for a
// lock after it answer 503 with nothing taken, instead of having their sockets reset (a client could not
// tell whether a reset deduct or order had run).
import { once } from "node:events";
import { createLocks } from "@lockyard/lock";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error plain .mjs helper without types
import { startRedis } from "../../../scripts/lib/redis.mjs";
import { type ApiProcess, startApis, stopApis } from "./servers.js";

let server: { url: string; stop(): Promise<void> };
let redis: Redis;
let api: ApiProcess | undefined;

beforeAll(async () => {
  server = await startRedis();
  redis = new Redis(server.url);
}, 30_000);
afterAll(async () => {
  if (api) await stopApis([api]);
  redis?.disconnect();
  await server?.stop();
});

/** A tRPC answer: `result.data` on success, `error.message` on failure (`socket` when the socket failed). */
interface Reply {
  status: number;
  body: { result?: { data: unknown }; error?: { message: string }; socket?: string };
}

async function post(path: string, input: unknown): Promise<Reply> {
  const res = await fetch(`${api!.url}/trpc/${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(input),
  });
  return { status: res.status, body: (await res.json()) as Reply["body"] };
}

const outcome = (p: Promise<Reply>): Promise<Reply> =>
  p.then(
    (r) => r,
    (err: Error) => ({ status: 0, body: { socket: String(err.cause ?? err) } }),
  );

describe("shutdown", () => {
  it("SIGTERM: work in flight finishes; calls still waiting for a lock after the grace answer 503, nothing taken", async () => {
    const [started] = await startApis(server.url, 1, { LOCK_WAIT_MS: "20000", ORDER_PROCESSING_MS: "0" });
    api = started!;
    const busy = `sd-busy-${Date.now()}`;
    const free = `sd-free-${Date.now()}`;
    for (const productId of [busy, free]) {
      expect((await post("stock.reset", { productId, qty: 10 })).status).toBe(200);
    }
    // Another process holds the busy product's stock lock for longer than the whole shutdown.
    const other = createLocks({ redis, instanceId: "shutdown-test" });
    const held = await other.acquire(busy, { leaseMs: 30_000 });

    const waitingDeduct = outcome(post("stock.deduct", { productId: busy, mode: "redis" }));
    const waitingOrder = outcome(
      post("order.submit", { orderId: `sd-order-${Date.now()}`, items: [{ productId: busy, quantity: 2 }] }),
    );
    const working = outcome(post("stock.deduct", { productId: free, mode: "redis", workMs: 800 }));
    await new Promise((r) => setTimeout(r, 300));
    const exited = once(api.child, "exit");
    const signalled = performance.now();
    api.child.kill("SIGTERM");

    const finished = await working;
    expect(finished.status).toBe(200);
    expect(finished.body.result?.data).toMatchObject({ ok: true, stock: 9 });
    for (const waited of [await waitingDeduct, await waitingOrder]) {
      expect(waited.status).toBe(503);
      expect(waited.body.error?.message).toMatch(/is shutting down and stopped this call while it waited/);
    }
    const [code] = await exited;
    expect(code).toBe(0);
    // The grace (2 s), then the answers: well before the lock's 20 s wait.
    expect(performance.now() - signalled).toBeLessThan(8_000);
    expect(await redis.hget(`stock:{${busy}}`, "qty")).toBe("10");
    expect(await redis.keys("order:{sd-order-*")).toEqual([]);
    await held.release();
    await other.close();
  }, 30_000);
});
