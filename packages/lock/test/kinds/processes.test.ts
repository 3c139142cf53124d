// Semaphores and read-write locks across real processes (child_process.fork, one connection each).
import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { connect, makeLocks, uniq } from "../helpers.js";

const WORKER = fileURLToPath(new URL("./worker.mjs", import.meta.url));
type Message = { op: string; bad?: number; holds?: number };

let redis: Redis;
const children: ChildProcess[] = [];
beforeAll(() => {
  redis = connect();
});
afterAll(() => {
  for (const c of children) c.kill("SIGKILL");
  redis.disconnect();
});

function spawn(env: Record<string, string> = {}): {
  child: ChildProcess;
  next: (op: string) => Promise<Message>;
} {
  const child = fork(WORKER, [], {
    env: { ...process.env, REDIS_URL: inject("redisUrl"), ...env },
    stdio: "inherit",
  });
  children.push(child);
  const inbox: Message[] = [];
  const waiting: ((m: Message) => void)[] = [];
  child.on("message", (m: Message) => {
    const w = waiting.shift();
    if (w) w(m);
    else inbox.push(m);
  });
  const next = (op: string) =>
    new Promise<Message>((resolve, reject) => {
      const take = (m: Message) =>
        m.op === op ? resolve(m) : reject(new Error(`expected ${op}, got ${m.op}`));
      const m = inbox.shift();
      if (m) take(m);
      else waiting.push(take);
    });
  return { child, next };
}

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
