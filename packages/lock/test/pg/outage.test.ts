import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error: a plain .mjs script without types
import { startPostgres } from "../../../../scripts/lib/postgres.mjs";
import { LockLostError, LockTimeoutError } from "../../src/index.js";
import { createPgLocks, migratePgLocks } from "../../src/pg.js";
import { sleep, uniq } from "../helpers.js";

// A server of its own: this file kills it.
let server: { url: string; kill(signal?: string): Promise<void>; stop(): Promise<void> };
beforeAll(async () => {
  server = await startPostgres();
}, 60_000);
afterAll(async () => {
  await server.stop();
});

describe("PostgreSQL backend: the server goes away", () => {
  it("the holder loses its lock by the local deadline, and acquire rejects instead of hanging", async () => {
    const pool = new pg.Pool({ connectionString: server.url, max: 3, connectionTimeoutMillis: 500 });
    pool.on("error", () => {});
    await migratePgLocks(pool);
    const locks = createPgLocks({ pool, leaseMs: 600, waitMs: 1_000 });
    const h = await locks.acquire(uniq("outage"));
    const lost = new Promise<unknown>((resolve) =>
      h.signal.addEventListener("abort", () => resolve(h.signal.reason)),
    );
    const killedAt = performance.now();
    await server.kill("SIGKILL");
    const reason = await lost;
    expect(reason).toBeInstanceOf(LockLostError);
    expect((reason as LockLostError).reason).toBe("deadline");
    // Lost by the lease's end (counted from before the last successful renewal), give or take a busy machine.
    expect(performance.now() - killedAt).toBeLessThan(600 + 1_000);
    const t0 = performance.now();
    const err = await locks.acquire(uniq("outage")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(LockTimeoutError);
    expect(performance.now() - t0).toBeLessThan(3_000);
    await locks.close();
    await sleep(0);
    await pool.end();
  });
});
