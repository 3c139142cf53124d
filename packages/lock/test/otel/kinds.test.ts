// The semaphores and read-write locks of an instrumented Locks are traced like its mutex: an acquire span per
// call and a hold span per grant, each (and every metric) labelled with `lock.kind`.
import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import type { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLocks, type RedisLocks } from "../../src/index.js";
import { ATTR, instrumentLocks, METRIC, SPAN } from "../../src/otel.js";
import { connect, uniq } from "../helpers.js";
import { testTelemetry } from "./telemetry.js";

describe("otel: semaphores and read-write locks", () => {
  let redis: Redis;
  let t: ReturnType<typeof testTelemetry>;
  let locks: RedisLocks;

  beforeEach(() => {
    redis = connect();
    t = testTelemetry();
    locks = instrumentLocks(createLocks, { redis }, t.options);
  });
  afterEach(async () => {
    await locks.close();
    await t.shutdown();
    redis.disconnect();
  });

  it("each call gets an acquire span and each grant a hold span, labelled with the lock's kind", async () => {
    const sem = locks.semaphore(uniq("otel-sem"), 2);
    expect(sem.permits).toBe(2);
    const rw = locks.readWrite(uniq("otel-rw"));
    const mutex = uniq("otel-mutex");

    let holdOfCallback: string | undefined;
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
    try {
      await sem.withLock(() => {
        holdOfCallback = trace.getActiveSpan()?.spanContext().spanId;
      });
    } finally {
      context.disable();
    }
    const writer = await rw.write.acquire();
    expect(await rw.read.tryAcquire()).toBeNull();
    await writer.release();
    await (await locks.acquire(mutex)).release();

    const acquires = t.spans(SPAN.acquire);
    const byKind = (kind: string) => acquires.filter((s) => s.attributes[ATTR.lockKind] === kind);
    expect(byKind("semaphore").map((s) => s.attributes[ATTR.operation])).toEqual(["withLock"]);
    expect(byKind("write").map((s) => s.attributes[ATTR.outcome])).toEqual(["acquired"]);
    expect(byKind("read").map((s) => [s.attributes[ATTR.operation], s.attributes[ATTR.outcome]])).toEqual([
      ["tryAcquire", "refused"],
    ]);
    expect(byKind("mutex").map((s) => s.attributes[ATTR.resource])).toEqual([mutex]);

    const holds = t.spans(SPAN.hold);
    expect(holds.map((s) => s.attributes[ATTR.lockKind]).sort()).toEqual(["mutex", "semaphore", "write"]);
    // The semaphore's withLock callback ran under its hold span.
    const semHold = holds.find((s) => s.attributes[ATTR.lockKind] === "semaphore")!;
    expect(holdOfCallback).toBe(semHold.spanContext().spanId);

    expect(await t.count(METRIC.wait, { [ATTR.lockKind]: "semaphore" })).toBe(1);
    expect(await t.count(METRIC.wait, { [ATTR.lockKind]: "read", [ATTR.outcome]: "refused" })).toBe(1);
    expect(await t.count(METRIC.hold, { [ATTR.lockKind]: "write", [ATTR.outcome]: "released" })).toBe(1);
    expect(await t.count(METRIC.hold, { [ATTR.lockKind]: "mutex" })).toBe(1);
  });
});
