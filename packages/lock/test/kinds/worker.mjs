// A separate process for the semaphore and read-write tests across processes (processes.test.ts): one
// connection, one Locks, driven over IPC. It runs the built library (npm test builds before it tests).
import { Redis } from "ioredis";
import { createLocks } from "../../dist/index.js";

const redis = new Redis(process.env.REDIS_URL, { lazyConnect: false });
const locks = createLocks({
  redis,
  instanceId: `kinds-${process.pid}`,
  leaseMs: Number(process.env.LEASE_MS ?? 30_000),
  retry: { maxMs: 100 },
});
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** What one hold of `kind` must see on the Redis counters, judged by Redis (never by clocks). */
async function enter(kind, m) {
  if (kind === "permit") return { ok: (await redis.incr(m.inside)) <= m.permits };
  if (kind === "write") {
    const writers = await redis.incr(`${m.inside}:w`);
    const readers = Number(await redis.get(`${m.inside}:r`));
    return { ok: writers === 1 && readers === 0 };
  }
  await redis.incr(`${m.inside}:r`);
  return { ok: Number(await redis.get(`${m.inside}:w`)) === 0 };
}
async function leave(kind, m) {
  if (kind === "permit") await redis.decr(m.inside);
  else await redis.decr(`${m.inside}:${kind === "write" ? "w" : "r"}`);
}

process.on("message", async (m) => {
  if (m.op === "contend") {
    // `rounds` holds per caller, `parallel` callers; kind per hold from m.kinds (cycled).
    let bad = 0;
    let holds = 0;
    const one = async (c) => {
      for (let i = 0; i < m.rounds; i++) {
        const kind = m.kinds[(c + i) % m.kinds.length];
        const target =
          kind === "permit" ? locks.semaphore(m.resource, m.permits) : locks.readWrite(m.resource)[kind];
        await target.withLock(
          async () => {
            const { ok } = await enter(kind, m);
            if (!ok) bad++;
            await sleep(m.holdMs);
            await leave(kind, m);
            holds++;
          },
          { waitMs: 20_000 },
        );
      }
    };
    await Promise.all(Array.from({ length: m.parallel }, (_, c) => one(c)));
    process.send({ op: "done", bad, holds });
  } else if (m.op === "hold") {
    // Takes one hold and keeps it; the parent kills this process while it holds.
    const target =
      m.kind === "permit" ? locks.semaphore(m.resource, m.permits) : locks.readWrite(m.resource)[m.kind];
    await target.acquire();
    process.send({ op: "holding" });
  }
});
process.send({ op: "ready" });
