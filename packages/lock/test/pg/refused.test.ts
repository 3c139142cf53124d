// A statement the server refuses without running it: a lock timeout (55P03), a cancel or statement timeout
// (57014), a serialization failure or deadlock (40001, 40P01). A release refused so was left to the lease (the
// handle already said released, so the caller could not send it again): every waiter waited the lease out.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { isPgUnavailable } from "../../src/pg.js";
import { uniq } from "../helpers.js";
import { makePgLocks, pgPool, TABLE } from "../pg-helpers.js";

const LEASE_MS = 10_000;

let direct: pg.Pool;
let impatient: pg.Pool;
beforeAll(async () => {
  direct = await pgPool();
  // Sessions that give up waiting for a row lock after 100 ms, as a server or role setting can make them.
  impatient = new pg.Pool({ connectionString: inject("pgUrl"), max: 2, options: "-c lock_timeout=100" });
  impatient.on("error", () => {});
});
afterAll(async () => {
  await impatient.end();
  await direct.end();
});

describe("PostgreSQL backend: a statement the server refused without running it", () => {
  it("counts 55P03, 57014, 40001 and 40P01 as not run", () => {
    for (const code of ["55P03", "57014", "40001", "40P01"])
      expect(isPgUnavailable(Object.assign(new Error("refused"), { code })), code).toBe(true);
    expect(isPgUnavailable(Object.assign(new Error("no such table"), { code: "42P01" }))).toBe(false);
  });

  it("a release refused on a lock timeout is retried: the lock is free long before its lease ends", async () => {
    const { locks } = makePgLocks(impatient, { leaseMs: LEASE_MS });
    const { locks: other } = makePgLocks(direct, { leaseMs: LEASE_MS });
    const res = uniq("pg-refused-release");
    const mine = await locks.acquire(res, { leaseMs: LEASE_MS });
    // Another session holds the lock's row: the release waits for it, and gives up after 100 ms.
    const blocker = await direct.connect();
    await blocker.query("BEGIN");
    await blocker.query(`SELECT 1 FROM ${TABLE} WHERE resource = $1 FOR UPDATE`, [res]);
    const refused = await mine.release().catch((e: unknown) => e);
    expect((refused as { code?: string }).code).toBe("55P03");
    await blocker.query("COMMIT");
    blocker.release();
    const next = await other.acquire(res, { waitMs: 3_000 });
    expect(next.isHeld()).toBe(true);
    await next.release();
    await locks.close();
    await other.close();
  });
});
