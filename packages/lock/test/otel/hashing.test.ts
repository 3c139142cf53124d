import { createHash, createHmac } from "node:crypto";
import type { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createLocks, type Locks, LockTimeoutError } from "../../src/index.js";
import { ATTR, instrumentLocks, SPAN } from "../../src/otel.js";
import { connect, uniq } from "../helpers.js";
import { testTelemetry } from "./telemetry.js";

describe("otel: hashResourceNames", () => {
  let redis: Redis;
  let t: ReturnType<typeof testTelemetry>;
  const open: Locks[] = [];

  beforeEach(() => {
    redis = connect();
    t = testTelemetry();
  });
  afterEach(async () => {
    for (const l of open.splice(0)) await l.close();
    await t.shutdown();
    redis.disconnect();
  });

  const instrumented = (hashKey?: string) => {
    const locks = instrumentLocks(
      createLocks,
      { redis, instanceId: "host-of-bob" },
      { ...t.options, hashResourceNames: true, ...(hashKey ? { hashKey } : {}), resourceKind: () => "user" },
    );
    open.push(locks);
    return locks;
  };

  it("no resource name or owner in clear on any span, event, exception or metric", async () => {
    const a = instrumented("k1");
    const b = instrumented("k1");
    const r = uniq("user:alice@example.com");
    const h = await a.acquire(r);
    await expect(b.acquire(r, { waitMs: 50 })).rejects.toBeInstanceOf(LockTimeoutError);
    expect(await b.tryAcquire(r)).toBeNull();
    await h.renew();
    await h.release();
    // A bad name is still a string worth tracing, and its error message quotes it.
    await expect(a.acquire("user:alice@example.com\u0001")).rejects.toMatchObject({
      name: "InvalidResourceError",
    });

    const spans = t.spans();
    expect(spans.map((s) => s.name).sort()).toEqual([
      SPAN.acquire,
      SPAN.acquire,
      SPAN.acquire,
      SPAN.acquire,
      SPAN.hold,
    ]);
    const exported = JSON.stringify({
      spans: spans.map((s) => ({
        name: s.name,
        attributes: s.attributes,
        events: s.events,
        status: s.status,
      })),
      metrics: await t.metrics(),
    });
    expect(exported).toContain("InvalidResourceError");
    expect(exported).not.toMatch(/alice|bob/);
    // The same key on both instances: one resource, one hash, so the instances' spans can be matched.
    const hashed = createHmac("sha256", "k1").update(r).digest("hex").slice(0, 32);
    expect(new Set(spans.slice(0, 4).map((s) => s.attributes[ATTR.resource]))).toEqual(new Set([hashed]));
    expect(spans.find((s) => s.name === SPAN.hold)?.attributes[ATTR.owner]).toBe(
      createHmac("sha256", "k1").update(h.owner).digest("hex").slice(0, 32),
    );
  });

  it("without a key, one random key per process: alike across instances, not the plain SHA-256", async () => {
    const r = uniq("user:carol");
    await instrumented().withLock(r, () => undefined);
    await instrumented().withLock(r, () => undefined);
    const values = t.spans(SPAN.hold).map((s) => s.attributes[ATTR.resource]);
    expect(values).toHaveLength(2);
    expect(values[0]).toMatch(/^[0-9a-f]{32}$/);
    expect(values[1]).toBe(values[0]);
    expect(values[0]).not.toBe(createHash("sha256").update(r).digest("hex").slice(0, 32));
  });
});
