import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { InvalidOptionError, InvalidResourceError } from "../../src/index.js";
import { createPgLocks, migratePgLocks, pgLocksSchema } from "../../src/pg.js";
import { uniq } from "../helpers.js";
import { makePgLocks, pgPool } from "../pg-helpers.js";

let pool: pg.Pool;
beforeAll(async () => {
  pool = await pgPool();
});
afterAll(async () => {
  await pool.end();
});

describe("PostgreSQL backend: migration, options, packaging", () => {
  it("the migration is idempotent and safe to run concurrently; a schema-qualified table works", async () => {
    await pool.query("CREATE SCHEMA IF NOT EXISTS lockyard_mig");
    const table = `lockyard_mig.t_${process.pid}_${Date.now() % 100_000}`;
    await Promise.all(Array.from({ length: 4 }, () => migratePgLocks(pool, { table })));
    await migratePgLocks(pool, { table });
    const locks = createPgLocks({ pool, table });
    const h = await locks.acquire("mig:1");
    expect(h.token).toBe(1);
    await h.release();
    const { rows } = await pool.query(`SELECT count(*)::int AS n FROM ${table}`);
    expect(rows[0].n).toBe(1);
    await locks.close();
    expect(pgLocksSchema()).toContain('CREATE TABLE IF NOT EXISTS "lockyard_locks"');
  });

  it("fenceAtLeast raises the fencing sequence for a store that outlived the lock table, and never lowers it", async () => {
    const table = `lockyard_floor_${process.pid}_${Date.now() % 100_000}`;
    await migratePgLocks(pool, { table, fenceAtLeast: 500 });
    const locks = createPgLocks({ pool, table });
    const a = await locks.acquire("floor:a");
    expect(a.token).toBe(501);
    await a.release();
    // A later start with a lower floor (or the same one) changes nothing: tokens keep rising.
    await migratePgLocks(pool, { table, fenceAtLeast: 100 });
    await migratePgLocks(pool, { table, fenceAtLeast: 501 });
    const b = await locks.acquire("floor:b");
    expect(b.token).toBe(502);
    await b.release();
    await migratePgLocks(pool, { table, fenceAtLeast: 10_000 });
    const c = await locks.acquire("floor:a");
    expect(c.token).toBe(10_001);
    await c.release();
    await locks.close();
    // Past 2^53 − 2^32 the tokens after it would not stay exact numbers (one would repeat).
    for (const bad of [-1, 1.5, Number.NaN, "7", 2 ** 60, Number.MAX_SAFE_INTEGER - 2]) {
      await expect(migratePgLocks(pool, { table, fenceAtLeast: bad as number })).rejects.toMatchObject({
        name: "InvalidOptionError",
        option: "fenceAtLeast",
      });
    }
  });

  it("bad options are InvalidOptionError, thrown synchronously; bad resources reject before any query", async () => {
    const bad: [unknown, string][] = [
      [undefined, "options"],
      [{}, "pool"],
      [{ pool: { query: 1 } }, "pool"],
      [{ pool, table: "Locks" }, "table"],
      [{ pool, table: 'x"; DROP TABLE y; --' }, "table"],
      [{ pool, table: "a.b.c" }, "table"],
      [{ pool: new pg.Pool({ connectionString: inject("pgUrl"), max: 1 }) }, "pool.max"],
      // A Client has query and connect too, but no second connection to LISTEN on.
      [{ pool: new pg.Client({ connectionString: inject("pgUrl") }) }, "pool"],
      [{ pool, leaseMs: -1 }, "leaseMs"],
    ];
    for (const [opts, option] of bad) {
      expect(() => createPgLocks(opts as never)).toThrow(InvalidOptionError);
      try {
        createPgLocks(opts as never);
      } catch (e) {
        expect((e as InvalidOptionError).option).toBe(option);
      }
    }
    await expect(migratePgLocks(pool, { table: "no-dash" })).rejects.toBeInstanceOf(InvalidOptionError);
    // A misspelt option would have migrated the default table instead; no pool was a TypeError.
    await expect(migratePgLocks(pool, { tabel: "x" } as never)).rejects.toMatchObject({
      name: "InvalidOptionError",
      option: "tabel",
    });
    await expect(migratePgLocks(undefined as never)).rejects.toMatchObject({
      name: "InvalidOptionError",
      option: "pool",
    });
    let queries = 0;
    const counting = Object.create(pool, { query: { value: () => queries++ } });
    const { locks } = makePgLocks(counting);
    await expect(locks.acquire("bad\u0001name")).rejects.toBeInstanceOf(InvalidResourceError);
    await expect(locks.tryAcquire("")).rejects.toBeInstanceOf(InvalidResourceError);
    expect(queries).toBe(0);
    await locks.close();
  });

  it("a missing table is a rejected acquire, not a hang", async () => {
    const locks = createPgLocks({ pool, table: "lockyard_never_migrated" });
    await expect(locks.acquire(uniq("x"))).rejects.toThrow(/does not exist/);
    await locks.close();
  });

  it("each entry loads only its own store client: the main entry never pg, the pg entry never ioredis", () => {
    const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../src");
    /** The files an entry loads at run time (type-only imports are erased) and the packages they import. */
    const load = (entry: string) => {
      const seen = new Set<string>();
      const packages = new Set<string>();
      const walk = (file: string) => {
        if (seen.has(file)) return;
        seen.add(file);
        const text = readFileSync(file, "utf8");
        for (const m of text.matchAll(/^(import|export)\s+(type\s+)?[^;]*?from\s+"([^"]+)"/gm)) {
          const spec = m[3]!;
          if (m[2]) continue;
          if (spec.startsWith(".")) walk(path.resolve(path.dirname(file), spec.replace(/\.js$/, ".ts")));
          else packages.add(spec);
        }
      };
      walk(path.join(src, entry));
      return { files: [...seen].map((f) => path.relative(src, f)), packages: [...packages] };
    };
    const main = load("index.ts");
    expect(main.files.filter((f) => f.startsWith(`pg${path.sep}`) || f === "pg.ts")).toEqual([]);
    expect(main.packages.filter((p) => /^pg(\/|$)/.test(p))).toEqual([]);
    expect(main.files).toContain(path.join("redis", "create-locks.ts"));
    const pgEntry = load("pg.ts");
    expect(pgEntry.packages.filter((p) => p.startsWith("ioredis"))).toEqual([]);
    expect(pgEntry.files.filter((f) => /^(redis|redlock)\//.test(f))).toEqual([]);
  });
});
