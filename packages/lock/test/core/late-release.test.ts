import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocks, type LockEvent } from "../../src/index.js";
import { sleep, uniq } from "../helpers.js";
import { failFast, type RedisServer, ready, startRedis } from "../redlock-helpers.js";

// The key must survive a kill + restart on the same port, as it would on a production Redis with AOF.
let server: RedisServer;
let dir: string;
beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "lockyard-late-"));
  server = await (startRedis as (o: object) => Promise<RedisServer>)({
    args: ["--appendonly", "yes", "--appendfsync", "always"],
    dir,
  });
});
afterAll(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

function client(): Redis {
  const c = new Redis(server.url, failFast);
  c.on("error", () => {});
  return c;
}

async function setup() {
  const redis = client();
  await ready(redis);
  const events: LockEvent[] = [];
  const locks = createLocks({ redis, onEvent: (e) => events.push(e) });
  return { redis, locks, events };
}

describe("a release that fails to reach Redis", () => {
  it("is retried in the background: the key is gone well before the lease ends and another owner gets it", async () => {
    const a = await setup();
    const b = await setup();
    const leaseMs = 3_000;
    const t0 = performance.now();
    const h = await a.locks.acquire(uniq("late"), { leaseMs });
    await server.kill("SIGKILL");
    const err = await h.release().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    await server.restart();
    await ready(b.redis);
    expect(await b.redis.hget(h.key, h.owner)).toBe("1"); // AOF kept it: only the late release can free it
    while ((await b.redis.exists(h.key)) === 1) {
      expect(performance.now() - t0).toBeLessThan(leaseMs);
      await sleep(20);
    }
    expect(performance.now() - t0).toBeLessThan(leaseMs);
    // b can see the key gone a moment before a's connection delivers the reply to its late release.
    await expect
      .poll(() => a.events.find((e) => e.type === "released"))
      .toMatchObject({ result: "released", late: true });
    const h2 = await b.locks.tryAcquire(h.resource);
    expect(h2).not.toBeNull();
    expect(await h2!.release()).toBe("released");
    await a.locks.close();
    await b.locks.close();
    a.redis.disconnect();
    b.redis.disconnect();
  });

  it("stops at the lease's end, and the next owner's lock stays intact", async () => {
    const a = await setup();
    const b = await setup();
    const leaseMs = 400;
    const t0 = performance.now();
    const h = await a.locks.acquire(uniq("late-expired"), { leaseMs });
    await server.kill("SIGKILL");
    await expect(h.release()).rejects.toBeInstanceOf(Error);
    await sleep(leaseMs + 200 - (performance.now() - t0)); // down past the lease
    await server.restart();
    await ready(b.redis);
    const h2 = await b.locks.acquire(h.resource, { leaseMs: 5_000, waitMs: 2_000 });
    await sleep(600); // a retry still running would have answered by now
    expect(await b.redis.hget(h.key, h2.owner)).toBe("1");
    expect(await b.redis.hget(h.key, h.owner)).toBeNull();
    // No attempt is made after the deadline, so the old handle never hears any answer.
    expect(a.events.filter((e) => e.type === "released")).toEqual([]);
    expect(await h2.release()).toBe("released");
    await a.locks.close();
    await b.locks.close();
    a.redis.disconnect();
    b.redis.disconnect();
  });

  it("stops on close(): the key then lives out its lease", async () => {
    const a = await setup();
    const b = await setup();
    const h = await a.locks.acquire(uniq("late-closed"), { leaseMs: 3_000 });
    await server.kill("SIGKILL");
    await expect(h.release()).rejects.toBeInstanceOf(Error);
    await a.locks.close();
    await server.restart();
    await ready(b.redis);
    await sleep(500);
    expect(await b.redis.hget(h.key, h.owner)).toBe("1");
    await b.redis.del(h.key);
    expect(a.events.filter((e) => e.type === "released")).toEqual([]);
    await b.locks.close();
    a.redis.disconnect();
    b.redis.disconnect();
  });
});
