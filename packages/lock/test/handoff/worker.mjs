// A separate process for the handoff tests (handoff-processes.test.ts): one connection, one Locks, driven over
// IPC. It runs the built library (npm test builds before it tests).
import { Redis } from "ioredis";
import { createLocks } from "../../dist/index.js";

const redis = new Redis(process.env.REDIS_URL, { lazyConnect: false });
const locks = createLocks({ redis, instanceId: `worker-${process.pid}`, retry: { maxMs: 200 } });
const wallNow = () => performance.timeOrigin + performance.now();

process.on("message", async (m) => {
  if (m.op === "contend") {
    // `rounds` acquisitions, each held `holdMs`, by `parallel` callers of this process at once.
    // Exclusion is judged by Redis, not by clocks: each hold counts itself in on a counter first (INCR answers
    // 1 unless another hold is still counted in) and out last, and takes a sequence number that orders the
    // holds as Redis saw them. Wall-clock intervals are kept for the record only: two processes' clocks can
    // disagree by a millisecond on a loaded machine.
    const holds = [];
    const one = async () => {
      for (let i = 0; i < m.rounds; i++) {
        const h = await locks.acquire(m.resource, { waitMs: 20_000 });
        const start = wallNow();
        const inside = await redis.incr(m.insideKey);
        const seq = await redis.incr(m.seqKey);
        await new Promise((r) => setTimeout(r, m.holdMs));
        await redis.decr(m.insideKey);
        const end = wallNow();
        holds.push({ owner: h.owner, start, end, token: h.token, inside, seq });
        await h.release();
      }
    };
    await Promise.all(Array.from({ length: m.parallel }, one));
    process.send({ op: "done", holds });
  } else if (m.op === "wait") {
    // Queue for the lock and report having asked; the parent kills this process while it waits.
    locks.acquire(m.resource, { waitMs: 20_000 }).then(
      () => process.send({ op: "acquired" }),
      () => {},
    );
    const mine = `worker-${process.pid}:`;
    const queued = async () => (await redis.lrange(m.queueKey, 0, -1)).some((o) => o.startsWith(mine));
    while (!(await queued())) await new Promise((r) => setTimeout(r, 5));
    process.send({ op: "queued" });
  }
});
process.send({ op: "ready" });
