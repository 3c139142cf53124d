import type { TRPCError } from "@trpc/server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testContext } from "../../test/context.js";
import { judgeReadWrite } from "../demo/read-write/verdict.js";
import { createCaller } from "../root.js";
import type { ReadWriteHold, ReadWriteView } from "../types.js";

let t: Awaited<ReturnType<typeof testContext>>;
beforeAll(async () => {
  t = await testContext();
});
afterAll(() => t.close());

const byActor = (holds: ReadWriteHold[]) => new Map(holds.map((h) => [h.actor, h]));

describe("demo.readWrite.run", () => {
  it("readers share the lock, the writer waits for them and holds it alone, late readers wait for the writer", async () => {
    // Sample the live list while the story plays: the lock shows as a read-write lock in each of its states.
    const seen: ReadWriteView[] = [];
    let running = true;
    const sampling = (async () => {
      while (running) {
        const { locks } = await t.caller.locks.list({ prefix: "demo:read-write:" });
        for (const l of locks) if (l.kind === "read-write" && l.readWrite) seen.push(l.readWrite);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const r = await t.caller.demo.readWrite.run({ timeScale: 1 }).finally(() => {
      running = false;
    });
    await sampling;

    expect(r.resource).toMatch(/^demo:read-write:[0-9a-f]{16}$/);
    expect(r.key).toBe(`lock:rw:{${r.resource}}`);
    const h = byActor(r.holds);
    expect([...h.keys()].sort()).toEqual([
      "reader 1",
      "reader 2",
      "reader 3",
      "reader 4",
      "reader 5",
      "writer",
    ]);
    const [r1, r2, r3, w, r4, r5] = [
      "reader 1",
      "reader 2",
      "reader 3",
      "writer",
      "reader 4",
      "reader 5",
    ].map((a) => h.get(a)!) as ReadWriteHold[];
    // The first readers overlap; the writer asked while they read and got in only after the last let go.
    expect(r2!.acquiredMs).toBeLessThan(r1!.releasedMs);
    expect(r3!.acquiredMs).toBeLessThan(r1!.releasedMs);
    expect(w!.requestedMs).toBeLessThan(r1!.releasedMs);
    expect(w!.acquiredMs).toBeGreaterThan(Math.max(r1!.releasedMs, r2!.releasedMs, r3!.releasedMs));
    // Readers 4 and 5 asked while the writer waited: they waited for it, then read together.
    for (const late of [r4!, r5!]) {
      expect(late.requestedMs).toBeLessThan(w!.acquiredMs);
      expect(late.acquiredMs).toBeGreaterThan(w!.releasedMs);
    }
    expect(r5!.acquiredMs).toBeLessThan(r4!.releasedMs);
    expect(new Set(r.holds.map((x) => x.token)).size).toBe(6);

    expect(r.verdict).toEqual(judgeReadWrite(r.holds));
    expect(r.verdict).toMatchObject({
      ok: true,
      readersOverlapped: true,
      writerExclusive: true,
      writerNotStarved: true,
    });
    expect(seen.some((v) => v.readers >= 2 && v.writerWaiting)).toBe(true);
    expect(seen.some((v) => v.writer !== null && v.readers === 0)).toBe(true);
    expect((await t.caller.locks.list({ prefix: r.resource })).locks).toEqual([]);
  });

  it("counts as a scenario (one per client at a time), needs the admin token when set, checks its input", async () => {
    const results = await Promise.allSettled([
      t.caller.demo.readWrite.run({ timeScale: 0.25 }),
      t.caller.demo.readWrite.run({ timeScale: 0.25 }),
    ]);
    const refused = results.filter((x) => x.status === "rejected").map((x) => (x.reason as TRPCError).code);
    expect(refused).toEqual(["TOO_MANY_REQUESTS"]);

    const err = await t.caller.demo.readWrite.run({ timeScale: 5 }).catch((e: unknown) => e);
    expect((err as TRPCError).code).toBe("BAD_REQUEST");

    const guarded = createCaller({ ...t.ctx, config: { ...t.ctx.config, adminToken: "s3cret" } });
    const denied = await guarded.demo.readWrite.run({}).catch((e: unknown) => e);
    expect((denied as TRPCError).code).toBe("UNAUTHORIZED");
  });
});
