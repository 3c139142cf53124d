// A separate process for the handoff tests (handoff-processes.test.ts): one connection, one Locks, driven over
// IPC. It runs the built library (npm test builds before it tests).
import { Redis } from "ioredis";
import { AFTER_IO_MIN_MS, realClock } from "../../dist/core/clock.js";
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
  } else if (m.op === "timer-release") {
    // A release that grants the lock early, made in a timer callback, while the new holder sends nothing (a call
    // of its own would send that release at once, EarlyGrant.hurry): how long before the loop next wakes, 300 ms
    // later, Redis ran it, from the lease it started (the new holder's 30 s, which nothing renews meanwhile). A
    // process of its own, so that nothing else (a test runner's reports) wakes its event loop meanwhile; long
    // re-check timers, for the same reason. A release still put off then goes out with that wake.
    const quiet = createLocks({ redis, instanceId: `quiet-${process.pid}`, retry: { maxMs: 10_000 } });
    const held = await quiet.acquire(m.resource);
    const waiting = quiet.acquire(m.resource, { waitMs: 20_000 });
    // A second waiter keeps the process subscribed: no unsubscribe goes out when the first is granted.
    const third = quiet.acquire(m.resource, { waitMs: 20_000 });
    await new Promise((r) => setTimeout(r, 50));
    setTimeout(() => void held.release(), 5);
    const next = await waiting;
    await new Promise((r) => setTimeout(r, 300));
    const key = `lock:{${m.resource}}`;
    const [owned, pttl] = await Promise.all([redis.hget(key, next.owner), redis.pttl(key)]);
    const ranMsBefore = owned === "1" ? 30_000 - pttl : -1;
    await next.release();
    await (await third).release();
    await quiet.close();
    process.send({ op: "timer-released", ranMsBefore });
  } else if (m.op === "after-io") {
    // How soon afterIo runs when no I/O comes: here nothing else wakes the event loop (the connection's
    // handshake answered first), so its backstop decides.
    await redis.ping();
    await new Promise((r) => setTimeout(r, 50));
    const waited = [];
    for (let i = 0; i < m.times; i++) {
      waited.push(
        await new Promise((resolve) => {
          const start = performance.now();
          realClock.afterIo(() => resolve(performance.now() - start));
        }),
      );
    }
    process.send({ op: "after-io-waited", shortestMs: Math.min(...waited), atLeastMs: AFTER_IO_MIN_MS });
  }
});
process.send({ op: "ready" });
