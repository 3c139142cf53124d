import { describe, expect, it } from "vitest";
import { EMPTY_LOCK_STATE, type LockView, reduceLocks, type WatchEvent } from "./lock-state";

function lock(resource: string, over: Partial<LockView> = {}): LockView {
  return {
    store: "redis",
    key: `lock:{${resource}}`,
    kind: "mutex",
    permits: null,
    readWrite: null,
    resource,
    owners: [{ owner: "api-a:00ff", count: 1, instanceId: "api-a", mode: "exclusive" }],
    pttlMs: 10_000,
    leaseMs: 10_000,
    token: 1,
    waiters: 0,
    ...over,
  };
}

const snapshot = (locks: LockView[], instanceId = "api-a"): WatchEvent => ({
  kind: "snapshot",
  at: 0,
  instanceId,
  locks,
});
const delta = (d: Partial<Extract<WatchEvent, { kind: "delta" }>>): WatchEvent => ({
  kind: "delta",
  at: 0,
  instanceId: "api-a",
  added: [],
  changed: [],
  removed: [],
  ...d,
});

describe("reduceLocks", () => {
  it("builds the state from a snapshot, stamping each lock with its arrival time", () => {
    const s = reduceLocks(EMPTY_LOCK_STATE, snapshot([lock("a"), lock("b")]), 100);
    expect([...s.locks.keys()]).toEqual(["redis:lock:{a}", "redis:lock:{b}"]);
    expect(s.locks.get("redis:lock:{a}")?.receivedAt).toBe(100);
    expect(s.instanceId).toBe("api-a");
  });

  it("applies added, changed and removed, keeping untouched locks as they were", () => {
    const s0 = reduceLocks(EMPTY_LOCK_STATE, snapshot([lock("a"), lock("b")]), 0);
    const b0 = s0.locks.get("redis:lock:{b}");
    const s1 = reduceLocks(
      s0,
      delta({
        added: [lock("c", { waiters: 2 })],
        changed: [
          lock("a", { owners: [{ owner: "api-a:00ff", count: 2, instanceId: "api-a", mode: "exclusive" }] }),
        ],
        removed: ["lock:{b}"],
      }),
      500,
    );
    expect([...s1.locks.keys()].sort()).toEqual(["redis:lock:{a}", "redis:lock:{c}"]);
    expect(s1.locks.get("redis:lock:{a}")?.owners[0]?.count).toBe(2);
    expect(s1.locks.get("redis:lock:{a}")?.receivedAt).toBe(500);
    expect(s1.locks.get("redis:lock:{c}")?.waiters).toBe(2);
    expect(s0.locks.get("redis:lock:{b}")).toBe(b0);
    const s2 = reduceLocks(s1, delta({ changed: [lock("c", { waiters: 0 })] }), 600);
    expect(s2.locks.get("redis:lock:{a}")).toBe(s1.locks.get("redis:lock:{a}"));
  });

  it("a renewal (more TTL than the countdown predicts) replaces the lock with the new baseline", () => {
    const s0 = reduceLocks(EMPTY_LOCK_STATE, snapshot([lock("a", { pttlMs: 10_000 })]), 0);
    const s1 = reduceLocks(s0, delta({ changed: [lock("a", { pttlMs: 10_000 })] }), 3000);
    expect(s1.locks.get("redis:lock:{a}")).toMatchObject({ pttlMs: 10_000, receivedAt: 3000 });
  });

  it("heartbeats and repeated snapshots that only confirm the countdown return the same state", () => {
    const s0 = reduceLocks(EMPTY_LOCK_STATE, snapshot([lock("a", { pttlMs: 10_000 })]), 0);
    expect(reduceLocks(s0, { kind: "heartbeat", at: 1 }, 50)).toBe(s0);
    expect(reduceLocks(s0, snapshot([lock("a", { pttlMs: 9_000 })]), 1010)).toBe(s0);
    expect(reduceLocks(s0, delta({}), 1000)).toBe(s0);
  });

  it("tolerates the old shape: a full { at, instanceId, locks } each time is a snapshot", () => {
    const old = (locks: LockView[]) => ({ at: 0, instanceId: "api-a", locks }) as WatchEvent;
    const s0 = reduceLocks(EMPTY_LOCK_STATE, old([lock("a"), lock("b")]), 0);
    const s1 = reduceLocks(s0, old([lock("a", { pttlMs: 9_800 })]), 200);
    expect([...s1.locks.keys()]).toEqual(["redis:lock:{a}"]);
    expect(s1.locks.get("redis:lock:{a}")).toBe(s0.locks.get("redis:lock:{a}"));
    const { waiters: _, ...noWaiters } = lock("z");
    const s2 = reduceLocks(s1, old([noWaiters as LockView]), 300);
    expect(s2.locks.get("redis:lock:{z}")?.waiters).toBeUndefined();
  });

  it("a snapshot from another instance (after a failover) replaces everything; its stale deltas are ignored", () => {
    const s0 = reduceLocks(EMPTY_LOCK_STATE, snapshot([lock("a")]), 0);
    const s1 = reduceLocks(s0, snapshot([lock("b")], "api-b"), 10);
    expect(s1.instanceId).toBe("api-b");
    expect([...s1.locks.keys()]).toEqual(["redis:lock:{b}"]);
    expect(reduceLocks(s1, delta({ added: [lock("x")] }), 20)).toBe(s1);
  });

  it("a delta before any snapshot is ignored", () => {
    expect(reduceLocks(EMPTY_LOCK_STATE, delta({ added: [lock("a")] }), 0)).toBe(EMPTY_LOCK_STATE);
  });

  it("drops removed keys before upserting, so another store's lock on that key survives via added", () => {
    const s0 = reduceLocks(EMPTY_LOCK_STATE, snapshot([lock("a"), lock("a", { store: "postgres" })]), 0);
    const pg = s0.locks.get("postgres:lock:{a}");
    const s1 = reduceLocks(
      s0,
      delta({ removed: ["lock:{a}"], added: [lock("a", { store: "postgres" })] }),
      5,
    );
    expect([...s1.locks.keys()]).toEqual(["postgres:lock:{a}"]);
    expect(s1.locks.get("postgres:lock:{a}")).toBe(pg);
  });

  it("a writer starting to wait, or a permit taken, is a change even with the same holders and TTL", () => {
    const rw = (writerWaiting: boolean) =>
      lock("rw", { kind: "read-write", readWrite: { readers: 1, writer: null, writerWaiting } });
    const s0 = reduceLocks(EMPTY_LOCK_STATE, snapshot([rw(false)]), 0);
    const s1 = reduceLocks(s0, delta({ changed: [rw(true)] }), 0);
    expect(s1.locks.get("redis:lock:{rw}")?.readWrite?.writerWaiting).toBe(true);
    const sem = (total: number) => lock("s", { kind: "semaphore", permits: { used: 1, total } });
    const s2 = reduceLocks(s1, delta({ added: [sem(2)] }), 0);
    const s3 = reduceLocks(s2, delta({ changed: [sem(3)] }), 0);
    expect(s3.locks.get("redis:lock:{s}")?.permits).toEqual({ used: 1, total: 3 });
  });

  it("keeps locks of different stores on one key apart", () => {
    const s = reduceLocks(EMPTY_LOCK_STATE, snapshot([lock("a"), lock("a", { store: "postgres" })]), 0);
    expect(s.locks.size).toBe(2);
  });
});
