import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLocks, InvalidOptionError, QuorumError } from "../../src/index.js";
import { uniq } from "../helpers.js";
import { type RedisServer, startRedis } from "../redlock-helpers.js";

let master: RedisServer;
let replica: RedisServer;
let redis: Redis;
let replicaClient: Redis;

/** Resolves once the replica acknowledges a write: "online" alone is not enough right after the sync. */
async function replicationUp(timeoutMs = 10_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    await redis.set("replica-probe", String(performance.now()));
    if (Number(await redis.call("WAIT", 1, 500)) === 1) return;
  }
  throw new Error("the replica did not acknowledge writes");
}

beforeAll(async () => {
  // No 5 s wait for more replicas before the first full sync.
  master = await startRedis({ args: ["--repl-diskless-sync-delay", "0"] });
  replica = await startRedis({ args: ["--replicaof", "127.0.0.1", String(master.port)] });
  redis = new Redis(master.url);
  replicaClient = new Redis(replica.url);
  await replicationUp();
});

afterAll(async () => {
  redis?.disconnect();
  replicaClient?.disconnect();
  await replica?.stop();
  await master?.stop();
});

describe("waitReplicas (WAIT after acquiring), with a real replica", () => {
  it("acquires once the replica acknowledged the lock", async () => {
    const locks = createLocks({ redis, leaseMs: 600, waitReplicas: 1 });
    const r = uniq("replica.ok");
    const h = await locks.acquire(r);
    // WAIT returned 1, so the replica already has the key.
    expect(await replicaClient.hget(`lock:{${r}}`, h.owner)).toBe("1");
    expect(await h.release()).toBe("released");
    await locks.close();
  });

  it("a WAIT answered on a replacement connection counts as no acknowledgement", async () => {
    // The Sentinel failover test saw it: the connection dropped after the acquire's reply, ioredis sent the
    // queued WAIT on the new connection (there, to the promoted replica), which had written nothing and
    // answered at once with every replica, so a grant that existed only on the dead primary counted as acked.
    const locks = createLocks({ redis, leaseMs: 2_000, waitReplicas: 1 });
    const r = uniq("replica.reconnect");
    const client = redis as unknown as { call: (...args: unknown[]) => Promise<unknown> };
    const call = client.call;
    let dropped = false;
    client.call = function (this: unknown, ...args: unknown[]) {
      if (!dropped && String(args[0]).toUpperCase() === "WAIT") {
        dropped = true;
        redis.disconnect(true);
      }
      return call.apply(redis, args);
    };
    try {
      const err = await locks.acquire(r).catch((e: unknown) => e);
      expect(dropped).toBe(true);
      expect(err).toMatchObject({ name: "QuorumError", needed: 1, got: 0 });
    } finally {
      client.call = call;
    }
    // The next acquisition, with no reconnect in between, is acknowledged as usual.
    const h = await locks.acquire(r);
    expect(await h.release()).toBe("released");
    await locks.close();
  });

  it("fails with QuorumError and releases the lock when the replica does not acknowledge", async () => {
    const locks = createLocks({ redis, leaseMs: 600, waitReplicas: 1, waitReplicasTimeoutMs: 200 });
    const r = uniq("replica.paused");
    await replica.kill("SIGSTOP");
    try {
      const err = await locks.acquire(r).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(QuorumError);
      expect(err).toMatchObject({ name: "QuorumError", needed: 1, got: 0 });
      expect(await locks.tryAcquire(r).catch((e: unknown) => e)).toBeInstanceOf(QuorumError);
      expect(await redis.exists(`lock:{${r}}`)).toBe(0);
    } finally {
      await replica.kill("SIGCONT");
      await locks.close();
    }
    await replicationUp();
  });

  it("undoes only the re-entry when more replicas are required than exist", async () => {
    const plain = createLocks({ redis, leaseMs: 600 });
    const strict = createLocks({ redis, leaseMs: 600, waitReplicas: 2, waitReplicasTimeoutMs: 100 });
    const r = uniq("replica.reentry");
    const outer = await plain.acquire(r);
    const err = await strict.acquire(r, { owner: outer.owner }).catch((e: unknown) => e);
    expect(err).toMatchObject({ name: "QuorumError", needed: 2, got: 1 });
    expect(await redis.hget(`lock:{${r}}`, outer.owner)).toBe("1");
    expect(await outer.release()).toBe("released");
    await plain.close();
    await strict.close();
  });

  it("rejects bad waitReplicas options before any Redis call", () => {
    expect(() => createLocks({ redis, waitReplicas: -1 })).toThrow(InvalidOptionError);
    expect(() => createLocks({ redis, waitReplicas: 1, waitReplicasTimeoutMs: 0 })).toThrow(
      InvalidOptionError,
    );
    const cluster = { isCluster: true, defineCommand() {} } as never;
    expect(() => createLocks({ redis: cluster, waitReplicas: 1 })).toThrow(/Cluster/);
  });
});
