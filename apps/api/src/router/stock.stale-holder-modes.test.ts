// Defect 5 of the correctness issue through the API, for the two other safe modes (stock.stale-holder.test.ts
// has `redis`). The interleaving: the first holder reads qty = 1 and works; its lock is lost (the row's lease
// ends, the keys vanish from every Redlock node); a second holder takes the lock and reads qty = 1; the first
// one's write lands, then the second's. One unit may be sold, never two: `postgres` refuses the stale token
// (its own fence field, with the floor) or sells it first and leaves the newer holder sold-out, `redlock` has no
// tokens and relies on the write's floor. A sale made by a holder found lost at its release is still reported
// as the sale it was.
import { setTimeout as sleep } from "node:timers/promises";
import { createRedlock, lockKey as libLockKey } from "@lockyard/lock";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error plain .mjs helper without types
import { startRedis } from "../../../../scripts/lib/redis.mjs";
import { testContext, uid } from "../../test/context.js";
import { stockResource } from "../stock/keys.js";

async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await sleep(5);
  }
  throw new Error(`${what} never happened`);
}

type Ctx = Awaited<ReturnType<typeof testContext>>;

/** Runs the interleaving five times; `lose` takes the first holder's lock away behind its back. */
async function staleHolderRuns(
  t: Ctx,
  mode: "redlock" | "postgres",
  held: (r: string) => Promise<boolean>,
  lose: (r: string) => Promise<void>,
) {
  const outcomes: unknown[] = [];
  for (let run = 0; run < 5; run++) {
    const productId = uid("stale");
    const resource = stockResource(productId);
    await t.caller.stock.reset({ productId, qty: 1 });
    const first = t.caller.stock.deduct({ productId, mode, workMs: 400 });
    await waitFor(() => held(resource), `${mode} lock of ${resource} held`);
    await sleep(50); // the first holder has read qty = 1 and is working
    await lose(resource);
    const second = t.caller.stock.deduct({ productId, mode, workMs: 800 });
    const [a, b] = await Promise.allSettled([first, second]);
    const sold = [a, b].filter((r) => r.status === "fulfilled" && r.value.ok).length;
    expect(sold, JSON.stringify([a, b])).toBeLessThanOrEqual(1);
    expect((await t.caller.stock.get({ productId })).qty).toBe(1 - sold);
    outcomes.push(a.status === "fulfilled" ? a.value : a.reason);
  }
  return outcomes;
}

describe("postgres mode: a holder that lost its lock mid-work", () => {
  let t: Ctx;
  beforeAll(async () => {
    t = await testContext({ withPostgres: true });
  });
  afterAll(() => t.close());

  it("sells the last unit once: the fence or the floor refuses the other write", async () => {
    const pool = t.ctx.postgres!.pool;
    const outcomes = await staleHolderRuns(
      t,
      "postgres",
      async (r) =>
        (
          await pool.query(
            "SELECT 1 FROM lockyard_locks WHERE resource = $1 AND owner IS NOT NULL AND expires_at > now()",
            [r],
          )
        ).rowCount === 1,
      async (r) => {
        await pool.query("UPDATE lockyard_locks SET expires_at = now() WHERE resource = $1", [r]);
      },
    );
    // PostgreSQL's tokens are not registered by the read (fencedRead is a Redis script), so the first holder's
    // write is accepted and the newer holder's is refused by the floor: the unit is sold once either way.
    expect(outcomes.length).toBe(5);
  });
});

describe("redlock mode: a holder that lost its lock mid-work", () => {
  let t: Ctx;
  let nodes: { url: string; stop(): Promise<void> }[] = [];
  let clients: Redis[] = [];
  let lockClients: Redis[] = [];
  beforeAll(async () => {
    nodes = await Promise.all([startRedis(), startRedis(), startRedis()]);
    clients = nodes.map((n) => new Redis(n.url));
    lockClients = clients.map((c) => c.duplicate());
    for (const c of [...clients, ...lockClients]) c.on("error", () => {});
    const redlock = createRedlock({ clients: lockClients, leaseMs: 2_000 });
    t = await testContext({ redlock });
  });
  afterAll(async () => {
    try {
      await t?.close();
    } finally {
      for (const c of [...clients, ...lockClients]) c.disconnect();
      await Promise.all(nodes.map((n) => n.stop()));
    }
  });

  it("sells the last unit once, and a sale made by a holder found lost at release is reported as made", async () => {
    const key = (r: string) => libLockKey("lock:", r);
    const outcomes = await staleHolderRuns(
      t,
      "redlock",
      async (r) => (await Promise.all(clients.map((c) => c.exists(key(r))))).every((n) => n === 1),
      async (r) => {
        await Promise.all(clients.map((c) => c.del(key(r))));
      },
    );
    // Without tokens the first (stale) holder's write wins the unit; the second, which read 1, is refused.
    expect(outcomes.length).toBe(5);
  });
});
