// Semaphores and read-write locks across real processes (child_process.fork, one connection each).
import { fileURLToPath } from "node:url";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workers } from "../fork-worker.js";
import { connect, makeLocks, uniq } from "../helpers.js";

const WORKER = fileURLToPath(new URL("./worker.mjs", import.meta.url));
type Message = { op: string; bad?: number; holds?: number };

let redis: Redis;
const { spawn, killAll } = workers<Message>(WORKER);
beforeAll(() => {
  redis = connect();
});
afterAll(() => {
  killAll();
  redis.disconnect();
});

async function contend(kinds: string[], extra: Record<string, unknown> = {}) {
  const resource = uniq("xproc");
  const workers = Array.from({ length: 3 }, () => spawn());
  await Promise.all(workers.map((w) => w.next("ready")));
  const msg = { op: "contend", resource, inside: uniq("inside"), kinds, rounds: 8, parallel: 3, holdMs: 5 };
  for (const w of workers) w.child.send({ ...msg, ...extra });
  const done = await Promise.all(workers.map((w) => w.next("done")));
  return done.reduce((sum, d) => ({ bad: sum.bad + d.bad!, holds: sum.holds + d.holds! }), {
    bad: 0,
    holds: 0,
  });
}

describe("semaphore and read-write lock across processes", () => {
  it("3 processes × 3 callers: never more than 2 permit holders as Redis counts them", async () => {
    expect(await contend(["permit"], { permits: 2 })).toEqual({ bad: 0, holds: 72 });
  });

  it("3 processes × 3 callers, reads and writes mixed: a writer is always alone as Redis counts it", async () => {
    expect(await contend(["read", "read", "write"])).toEqual({ bad: 0, holds: 72 });
  });

  for (const kind of ["permit", "write"] as const) {
    it(`a SIGKILLed ${kind} holder's hold comes back within its lease`, async () => {
      const resource = uniq("killed");
      const w = spawn({ LEASE_MS: "600" });
      await w.next("ready");
      w.child.send({ op: "hold", kind, resource, permits: 1 });
      await w.next("holding");
      w.child.kill("SIGKILL");
      const killedAt = performance.now();
      const { locks } = makeLocks(redis, { retry: { maxMs: 100 } });
      const h =
        kind === "permit"
          ? await locks.semaphore(resource, 1).acquire({ waitMs: 5_000 })
          : await locks.readWrite(resource).read.acquire({ waitMs: 5_000 });
      // At most one lease (600 ms; the watchdog renewed it up to a third of a lease before) plus a retry.
      expect(performance.now() - killedAt).toBeLessThan(1_500);
      await h.release();
      await locks.close();
    });
  }
});
