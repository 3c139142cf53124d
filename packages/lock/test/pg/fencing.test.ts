import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { LockError } from "../../src/index.js";
import { createPgLocks, migratePgLocks } from "../../src/pg.js";
import { sleep, uniq } from "../helpers.js";
import { makePgLocks, pgPool, row, TABLE } from "../pg-helpers.js";

let pool: pg.Pool;
beforeAll(async () => {
  pool = await pgPool();
});
afterAll(async () => {
  await pool.end();
});

describe("PostgreSQL backend: fencing tokens and list()", () => {
  it("tokens strictly increase across fresh acquisitions (release, expiry, other resources); re-entry keeps it", async () => {
    const { locks } = makePgLocks(pool);
    const r = uniq("fence");
    const tokens: number[] = [];
    for (let i = 0; i < 5; i++) {
      const h = await locks.acquire(r, { leaseMs: 5_000 });
      const again = await locks.acquire(r, { owner: h.owner });
      expect(again.token).toBe(h.token);
      expect((await row(pool, r))?.fence).toBe(h.token);
      tokens.push(h.token!);
      // Another resource takes a token from the same sequence in between.
      const o = await locks.acquire(uniq("fence-other"));
      tokens.push(o.token!);
      await o.release();
      await again.release();
      await h.release();
    }
    const expiring = await locks.acquire(r, { leaseMs: 100 });
    tokens.push(expiring.token!);
    await sleep(200);
    const taker = await locks.acquire(r, { leaseMs: 5_000 });
    tokens.push(taker.token!);
    await taker.release();
    for (let i = 1; i < tokens.length; i++) expect(tokens[i]!).toBeGreaterThan(tokens[i - 1]!);
    await locks.close();
  });

  it("only fresh acquisitions draw from the sequence: waiting and re-entry do not", async () => {
    const { locks } = makePgLocks(pool);
    const r = uniq("nodraw");
    const h = await locks.acquire(r, { leaseMs: 5_000 });
    for (let i = 0; i < 5; i++) {
      expect(await locks.tryAcquire(r)).toBeNull();
      await (await locks.acquire(r, { owner: h.owner })).release();
    }
    await h.release();
    const next = await locks.acquire(r, { leaseMs: 5_000 });
    expect(next.token).toBe(h.token! + 1);
    await next.release();
    await locks.close();
  });

  it("a row purged while an acquire is in flight: the new row still gets a fresh, higher token", async () => {
    const { locks } = makePgLocks(pool);
    const r = uniq("purged");
    const first = await locks.acquire(r, { leaseMs: 5_000 });
    await first.release();
    const purger = new pg.Client({ connectionString: inject("pgUrl") });
    await purger.connect();
    await purger.query("BEGIN");
    await purger.query(`DELETE FROM ${TABLE} WHERE resource = $1`, [r]);
    // This acquire's snapshot still sees the row; its INSERT waits for the purge and then inserts.
    const pending = locks.acquire(r, { leaseMs: 5_000 });
    await sleep(200);
    await purger.query("COMMIT");
    await purger.end();
    const h = await pending;
    expect(h.token!).toBeGreaterThan(first.token!);
    expect((await row(pool, r))?.fence).toBe(h.token);
    await h.release();
    await locks.close();
  });

  it("list(): live locks only, owners with counts, pttl, token, lease of own handles, globs with literal _", async () => {
    const { locks } = makePgLocks(pool, { leaseMs: 3_000 });
    const base = uniq("list").replace(/\./g, "_");
    const h1 = await locks.acquire(`${base}:a`);
    const h1b = await locks.acquire(`${base}:a`, { owner: h1.owner });
    const h2 = await locks.acquire(`${base}:b`, { leaseMs: 2_000 });
    await (await locks.acquire(`${base}:gone`)).release();
    await locks.acquire(`${base}Xc`, { leaseMs: 2_000 });
    const infos = await locks.list({ match: `${base}:*` });
    expect(infos.map((i) => i.resource)).toEqual([`${base}:a`, `${base}:b`]);
    expect(infos[0]).toMatchObject({
      key: `lock:{${base}:a}`,
      owners: [{ owner: h1.owner, count: 2 }],
      token: h1.token,
      leaseMs: 3_000,
    });
    expect(infos[0]!.pttlMs).toBeGreaterThan(2_000);
    expect(infos[0]!.pttlMs).toBeLessThanOrEqual(3_000);
    expect(infos[1]).toMatchObject({ token: h2.token, leaseMs: 2_000 });
    // `_` in a resource is literal, not LIKE's any-character.
    const underscore = base.slice(0, base.lastIndexOf("_"));
    expect(await locks.list({ match: `${underscore}X*` })).toEqual([]);
    expect(await locks.list({ match: `${base}?c` })).toHaveLength(1);
    expect(await locks.list({ match: `${base}*`, limit: 2 })).toHaveLength(2);
    await h1b.release();
    await h1.release();
    await locks.close();
  });

  it("list()'s limit counts the locks the glob matches, not the rows LIKE (wider: `[x]` is `_`) found first", async () => {
    const { locks } = makePgLocks(pool, { leaseMs: 3_000 });
    const base = uniq("list-class").replace(/\./g, "_");
    // Rows that LIKE's `_` takes and the glob's [x] does not, sorted before the ones it does.
    for (const c of ["a", "b", "c"]) await locks.acquire(`${base}${c}1`);
    const wanted = [await locks.acquire(`${base}x1`), await locks.acquire(`${base}x2`)];
    expect((await locks.list({ match: `${base}[x]*`, limit: 2 })).map((i) => i.resource)).toEqual(
      wanted.map((h) => h.resource),
    );
    expect(await locks.list({ match: `${base}[x]*`, limit: 1 })).toHaveLength(1);
    await locks.close();
  });
});

describe("PostgreSQL backend: a token past 2^53 - 1", () => {
  it("is not handed out: the acquire rejects saying why and gives the lock back; up to 2^53 - 1 it is exact", async () => {
    // A table of its own: its sequence is raised here, past what migratePgLocks' fenceAtLeast allows.
    const table = "lockyard_big_tokens";
    await migratePgLocks(pool, { table });
    const locks = createPgLocks({ pool, table });
    await pool.query("SELECT setval('lockyard_big_tokens_fence', $1)", [String(Number.MAX_SAFE_INTEGER - 1)]);
    const exact = await locks.acquire(uniq("big-token"));
    expect(exact.token).toBe(Number.MAX_SAFE_INTEGER);
    await exact.release();
    // The next would be 2^53, which rounds to the same number as 2^53 + 1: two grants could share a token.
    const resource = uniq("big-token");
    const err = await locks.acquire(resource).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LockError);
    expect((err as Error).message).toMatch(/fencing token 9007199254740992 .* past 2\^53 - 1/);
    const { rows } = await pool.query(`SELECT expires_at > now() AS live FROM ${table} WHERE resource = $1`, [
      resource,
    ]);
    expect(rows[0]?.live ?? false).toBe(false);
    await locks.close();
    await pool.query(`DROP TABLE ${table}; DROP SEQUENCE lockyard_big_tokens_fence`);
  });
});
