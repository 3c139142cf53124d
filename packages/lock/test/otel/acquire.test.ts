import type { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLocks, type LockEvent, type Locks, LockTimeoutError } from "../../src/index.js";
import { ATTR, instrumentLocks, METRIC, SPAN } from "../../src/otel.js";
import { connect, sleep, uniq } from "../helpers.js";
import { eventNames, testTelemetry } from "./telemetry.js";

describe("otel: acquire spans and wait metrics", () => {
  let redis: Redis;
  let t: ReturnType<typeof testTelemetry>;
  const open: Locks[] = [];
  const instrumented = (onEvent?: (e: LockEvent) => void) => {
    const locks = instrumentLocks(createLocks, { redis, ...(onEvent ? { onEvent } : {}) }, t.options);
    open.push(locks);
    return locks;
  };

  beforeEach(() => {
    redis = connect();
    t = testTelemetry();
  });
  afterEach(async () => {
    for (const l of open.splice(0)) await l.close();
    await t.shutdown();
    redis.disconnect();
  });

  it("a call that waits behind another holder: one acquire span with its wait, attempts and outcome", async () => {
    const locks = instrumented();
    const other = instrumented();
    const r = uniq("otel-wait");
    const first = await locks.acquire(r);
    const second = other.withLock(r, () => undefined, { waitMs: 5_000 });
    const queued = locks.withLock(r, () => undefined, { waitMs: 5_000 }); // behind `first`, in this process's queue
    await sleep(150);
    expect(await t.sum(METRIC.waiters)).toBe(2);
    await first.release();
    await Promise.all([second, queued]);

    const acquires = t.spans(SPAN.acquire);
    expect(acquires).toHaveLength(3);
    for (const s of acquires) {
      expect(s.attributes[ATTR.outcome]).toBe("acquired");
      expect(s.attributes[ATTR.resource]).toBe(r);
    }
    expect(acquires.map((s) => s.attributes[ATTR.operation]).sort()).toEqual([
      "acquire",
      "withLock",
      "withLock",
    ]);
    const waited = acquires.filter((s) => eventNames(s).includes("contended"));
    expect(waited).toHaveLength(2);
    for (const s of waited) {
      expect(s.attributes[ATTR.waitMs]).toBeGreaterThanOrEqual(140);
      expect(s.attributes[ATTR.attempts]).toBeGreaterThanOrEqual(1);
    }
    // The cross-instance waiter was refused once before it waited.
    const crossed = waited.find((s) => s.events.some((e) => (e.attributes?.[ATTR.pttlMs] as number) > 0));
    expect(crossed?.attributes[ATTR.attempts]).toBeGreaterThanOrEqual(2);
    expect(await t.sum(METRIC.waiters)).toBe(0);
    expect(await t.count(METRIC.wait, { [ATTR.outcome]: "acquired" })).toBe(3);
    expect(await t.count(METRIC.hold, { [ATTR.outcome]: "released" })).toBe(3);
  });

  it("a timeout: outcome timeout, an error status, counted as a failure, no waiter left", async () => {
    const holder = instrumented();
    const locks = instrumented();
    const r = uniq("otel-timeout");
    const h = await holder.acquire(r);
    await expect(locks.acquire(r, { waitMs: 120 })).rejects.toBeInstanceOf(LockTimeoutError);
    await h.release();

    const [span] = t.spans(SPAN.acquire).filter((s) => s.attributes[ATTR.outcome] !== "acquired");
    expect(span?.attributes[ATTR.outcome]).toBe("timeout");
    expect(span?.status.code).toBe(2); // SpanStatusCode.ERROR
    expect(span?.attributes[ATTR.waitMs]).toBeGreaterThanOrEqual(120);
    expect(span?.attributes[ATTR.attempts]).toBeGreaterThanOrEqual(1);
    expect(await t.sum(METRIC.failures, { [ATTR.failureReason]: "timeout" })).toBe(1);
    expect(await t.count(METRIC.wait, { [ATTR.outcome]: "timeout" })).toBe(1);
    expect(await t.sum(METRIC.waiters)).toBe(0);
  });

  it("calls that end without an event (tryAcquire refused, aborted, closed) leave no waiter counted", async () => {
    const holder = instrumented();
    const locks = instrumented();
    const r = uniq("otel-noevent");
    const h = await holder.acquire(r);

    expect(await locks.tryAcquire(r)).toBeNull();
    const ac = new AbortController();
    const aborted = locks.acquire(r, { waitMs: 5_000, signal: ac.signal });
    const closing = instrumented();
    const closed = closing.acquire(r, { waitMs: 5_000 });
    await sleep(100);
    expect(await t.sum(METRIC.waiters)).toBe(2);
    ac.abort(new Error("client went away"));
    await expect(aborted).rejects.toThrow("client went away");
    await closing.close();
    await expect(closed).rejects.toMatchObject({ name: "LocksClosedError" });
    await h.release();

    const outcomes = t.spans(SPAN.acquire).map((s) => s.attributes[ATTR.outcome]);
    expect(outcomes.sort()).toEqual(["aborted", "acquired", "closed", "refused"]);
    expect(await t.sum(METRIC.waiters)).toBe(0);
    expect(await t.sum(METRIC.failures, { [ATTR.failureReason]: "aborted" })).toBe(1);
    expect(await t.sum(METRIC.failures, { [ATTR.failureReason]: "closed" })).toBe(1);
    expect(await t.sum(METRIC.failures, { [ATTR.failureReason]: "refused" })).toBe(0);
  });

  it("the caller's own onEvent still gets every event, even when it throws", async () => {
    const seen: string[] = [];
    const locks = instrumented((e) => {
      seen.push(e.type);
      throw new Error("a listener's bug");
    });
    await locks.withLock(uniq("otel-listener"), () => undefined);
    expect(seen).toEqual(["acquired", "released"]);
    expect(t.spans(SPAN.acquire)).toHaveLength(1);
    expect(t.spans(SPAN.hold)).toHaveLength(1);
  });
});
