import { TRPCError } from "@trpc/server";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error plain .mjs helper without types
import { freePort } from "../../../scripts/lib/ports.mjs";
// @ts-expect-error plain .mjs helper without types
import { startPostgres } from "../../../scripts/lib/postgres.mjs";
import { createContextInner } from "../src/context.js";
import { connectPostgres, type PostgresMode } from "../src/postgres.js";
import { createCaller } from "../src/root.js";
import { testContext, uid } from "./context.js";
import { testServices } from "./services.js";

let t: Awaited<ReturnType<typeof testContext>>;
let server: { url: string; kill(sig?: string): Promise<void>; stop(): Promise<void> } | undefined;
let conn: ReturnType<typeof connectPostgres> | undefined;
beforeAll(async () => {
  t = await testContext();
});
afterAll(async () => {
  await conn?.close();
  await server?.stop();
  await t.close();
});

async function until<T>(what: string, fn: () => T | undefined, timeoutMs = 15_000): Promise<T> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const v = fn();
    if (v !== undefined) return v;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe("PostgreSQL unreachable, arriving late, and going away", () => {
  it("reports the mode unavailable, picks PostgreSQL up once it runs, and answers 503 when it dies", async () => {
    const port = (await freePort()) as number;
    const url = `postgres://postgres@127.0.0.1:${port}/lockyard`;
    let mode: PostgresMode | null = null;
    let reason: string | null = null;
    conn = connectPostgres({
      url,
      instanceId: t.ctx.config.instanceId,
      leaseMs: 2_000,
      logger: pino({ level: "silent" }),
      retryMs: 200,
      onChange(m, r) {
        mode = m;
        reason = r;
      },
    });
    await conn.ready;
    expect(mode).toBeNull();
    expect(reason).toMatch(new RegExp(`PostgreSQL at 127.0.0.1:${port}/lockyard is unreachable`));

    // What system.info and the burst say while it is unreachable; the other modes are untouched.
    const services = { redis: t.redis, locks: t.locks };
    const down = createCaller(
      await createContextInner(testServices({ ...services, postgres: null, postgresReason: reason })),
    );
    const info = await down.system.info();
    expect(info.modes.find((m) => m.mode === "postgres")).toMatchObject({ available: false, reason });
    const productId = uid("p");
    await down.stock.reset({ productId, qty: 5 });
    expect(await down.stock.deduct({ productId, mode: "redis" })).toMatchObject({ ok: true, stock: 4 });

    // PostgreSQL starts after the API: the retry opens the mode without a restart.
    server = await startPostgres({ port });
    const opened = await until("the postgres mode to open", () => mode ?? undefined);
    const up = createCaller(await createContextInner(testServices({ ...services, postgres: opened })));
    expect(await up.stock.deduct({ productId, mode: "postgres" })).toMatchObject({ ok: true, stock: 3 });
    expect((await up.system.info()).postgres.available).toBe(true);

    // It dies: postgres-mode deducts fail fast with SERVICE_UNAVAILABLE, never a 500; the rest keeps working.
    await server!.kill("SIGKILL");
    const started = performance.now();
    for (let i = 0; i < 3; i++) {
      const err = await up.stock.deduct({ productId, mode: "postgres" }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(TRPCError);
      expect((err as TRPCError).code).toBe("SERVICE_UNAVAILABLE");
      expect((err as TRPCError).message).toMatch(/PostgreSQL/);
    }
    expect(performance.now() - started).toBeLessThan(10_000);
    const after = await up.system.info();
    expect(after.postgres.available).toBe(false);
    expect(after.modes.find((m) => m.mode === "postgres")?.reason).toMatch(/unreachable/);
    expect(await up.stock.deduct({ productId, mode: "redis" })).toMatchObject({ ok: true, stock: 2 });
  });
});
