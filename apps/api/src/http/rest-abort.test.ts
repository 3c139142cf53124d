// A REST deduct whose client went away while it waited for the stock lock sells nothing, as on /trpc.
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { postJson, type RestServer, startRest } from "../../test/seed-rest-server.js";
import { Admission } from "../stock/admission.js";
import { stockResource } from "../stock/keys.js";

const logs: { level: number; msg: string }[] = [];
let rest: RestServer;
beforeAll(async () => {
  rest = await startRest({
    // One deduct per product at a time: a second one admitted means the first has settled.
    admission: new Admission({ maxWaiters: 1, maxQueuedWorkMs: 15_000 }),
    logger: pino({ level: "debug" }, { write: (line: string) => void logs.push(JSON.parse(line)) }),
  });
});
afterAll(() => rest.close());

function settled(productId: string): boolean {
  try {
    rest.ctx.admission.enter(productId, 0, false)();
    return true;
  } catch {
    return false;
  }
}

describe("an abandoned REST deduct", () => {
  it("that has not taken the lock yet sells nothing once the lock is free, and is no error", async () => {
    const productId = await rest.product(10);
    const held = await rest.locks.acquire(stockResource(productId));
    try {
      const contended = () => rest.events.filter((e) => e.type === "contended" && e.resource === productId);
      const client = new AbortController();
      const call = postJson(
        `${rest.url}/api/stock/deduct`,
        JSON.stringify({ productId, mode: "redis", workMs: 50 }),
        client.signal,
      );
      await vi.waitFor(() => expect(contended().length).toBeGreaterThan(0), { timeout: 5_000, interval: 10 });
      const serverSide = rest.responses.at(-1)!;
      const closed = new Promise((resolve) => serverSide.once("close", resolve));
      client.abort();
      await expect(call).rejects.toThrow();
      // The server has seen its client go before the lock is free.
      await closed;
    } finally {
      await held.release();
    }
    await vi.waitFor(() => expect(settled(productId)).toBe(true), { timeout: 5_000, interval: 10 });
    expect(await rest.stock(productId)).toBe(10);
    expect(logs.filter((l) => l.level >= 40)).toEqual([]);
    expect(logs).toContainEqual(expect.objectContaining({ level: 20, msg: "client went away" }));
  });
});
