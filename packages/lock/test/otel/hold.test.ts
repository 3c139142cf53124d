import { context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import type { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLocks, type Locks } from "../../src/index.js";
import { ATTR, instrumentLocks, METRIC, SPAN } from "../../src/otel.js";
import { connect, sleep, uniq } from "../helpers.js";
import { eventNames, testTelemetry } from "./telemetry.js";

describe("otel: hold spans", () => {
  let redis: Redis;
  let t: ReturnType<typeof testTelemetry>;
  let locks: Locks;

  beforeEach(() => {
    redis = connect();
    t = testTelemetry();
  });
  afterEach(async () => {
    await locks.close();
    await t.shutdown();
    redis.disconnect();
  });

  it("renewed while held, then lost when the key goes: the hold ends with the loss and its reason", async () => {
    locks = instrumentLocks(createLocks, { redis, leaseMs: 300 }, t.options);
    const h = await locks.acquire(uniq("otel-lost"));
    await sleep(350); // the watchdog renews every 100 ms
    await redis.del(h.key);
    await new Promise((resolve) => h.signal.addEventListener("abort", resolve));
    expect(await h.release()).toBe("not-owner");

    const [hold, ...more] = t.spans(SPAN.hold);
    expect(more).toHaveLength(0);
    const names = eventNames(hold!);
    expect(names.filter((n) => n === "renewed").length).toBeGreaterThanOrEqual(2);
    expect(names.at(-1)).toBe("lost");
    expect(names).not.toContain("released");
    expect(hold!.events.at(-1)?.attributes?.[ATTR.lostReason]).toBe("renew-refused");
    expect(hold!.status.code).toBe(2); // SpanStatusCode.ERROR
    expect(hold!.attributes[ATTR.owner]).toBe(h.owner);
    expect(hold!.attributes[ATTR.token]).toBe(h.token);
    expect(await t.sum(METRIC.renewals)).toBeGreaterThanOrEqual(2);
    expect(await t.sum(METRIC.failures, { [ATTR.failureReason]: "renew-refused" })).toBe(1);
    expect(await t.count(METRIC.hold, { [ATTR.outcome]: "lost" })).toBe(1);
    expect(await t.count(METRIC.hold, { [ATTR.outcome]: "released" })).toBe(0);
  });

  it("a release that finds another owner ends the hold as lost, counted once", async () => {
    locks = instrumentLocks(createLocks, { redis }, t.options);
    const h = await locks.acquire(uniq("otel-not-owner"));
    await redis.del(h.key);
    await redis.hset(h.key, "someone-else", 1);
    expect(await h.release()).toBe("not-owner");

    const [hold] = t.spans(SPAN.hold);
    expect(eventNames(hold!)).toEqual(["released", "lost"]);
    expect(hold!.events[0]?.attributes?.[ATTR.releaseResult]).toBe("not-owner");
    expect(hold!.events[1]?.attributes?.[ATTR.lostReason]).toBe("not-owner-at-release");
    expect(await t.sum(METRIC.failures, { [ATTR.failureReason]: "not-owner-at-release" })).toBe(1);
    await redis.del(h.key);
  });

  it("re-entry is one hold from the first grant to the last release; spans nest under the caller and the hold", async () => {
    const manager = new AsyncLocalStorageContextManager().enable();
    context.setGlobalContextManager(manager);
    try {
      locks = instrumentLocks(createLocks, { redis }, t.options);
      const tracer = t.options.tracer;
      const r = uniq("otel-nest");
      await tracer.startActiveSpan("request", async (request) => {
        await locks.withLock(r, async () => {
          tracer.startSpan("work").end();
          await locks.withLock(r, () => undefined);
        });
        request.end();
      });
    } finally {
      context.disable();
    }

    const id = (name: string) => t.spans(name)[0]!.spanContext().spanId;
    const parentOf = (name: string) => t.spans(name).map((s) => s.parentSpanContext?.spanId);
    const holds = t.spans(SPAN.hold);
    expect(holds).toHaveLength(1);
    expect(eventNames(holds[0]!)).toEqual(["reentered", "released", "released"]);
    expect(holds[0]!.events.map((e) => e.attributes?.[ATTR.releaseResult])).toEqual([
      undefined,
      "decremented",
      "released",
    ]);
    expect(parentOf(SPAN.hold)).toEqual([id("request")]);
    expect(parentOf("work")).toEqual([id(SPAN.hold)]);
    // The outer call's under the request, the re-entry's under the hold its callback ran in.
    expect(parentOf(SPAN.acquire).sort()).toEqual([id("request"), id(SPAN.hold)].sort());
    expect(trace.getActiveSpan()).toBeUndefined();
  });
});
