// A connection to PostgreSQL cut while a statement is on its way: after the server committed it (the reply is
// lost) or before the server read it. pg never sends a statement twice, so the call fails; without knowing
// that such a failure is "no answer", the core left a grant nobody heard, and a release that never ran, to
// their leases: every waiter waited the lease out.
import net from "node:net";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { isPgUnavailable } from "../../src/pg.js";
import { uniq } from "../helpers.js";
import { makePgLocks, pgPool, row, TABLE } from "../pg-helpers.js";

const LEASE_MS = 10_000;
/** Well inside the lease: only a release before the lease ends lets the other owner in by then. */
const WAIT_MS = 5_000;

let direct: pg.Pool;
beforeAll(async () => {
  direct = await pgPool();
});
afterAll(async () => {
  await direct.end();
});

describe("PostgreSQL backend: a statement whose connection is cut", () => {
  it("an acquire that committed but whose reply was lost is released in the background, long before its lease ends", async () => {
    const cutter = await startCutter(inject("pgUrl"));
    const pool = proxiedPool(cutter.url);
    const { locks } = makePgLocks(pool, { leaseMs: LEASE_MS });
    const { locks: theirs } = makePgLocks(direct);
    const res = uniq("pg-reply-lost");
    try {
      await pool.query("SELECT 1"); // connected: the next reply is the acquire's, not the server's greeting
      cutter.cutNext("reply");
      const err = await locks.acquire(res).catch((e: unknown) => e);
      expect(isPgUnavailable(err)).toBe(true);
      expect(cutter.cut).toBe("after the server answered");
      // It ran: only an acquire creates the row, and it drew a token.
      expect((await row(direct, res))?.fence).toBeGreaterThan(0);

      const h = await theirs.acquire(res, { waitMs: WAIT_MS });
      expect(h.isHeld()).toBe(true);
      await h.release();
    } finally {
      await locks.close();
      await theirs.close();
      await pool.end();
      await cutter.close();
    }
  });

  it("a release that never reached the server is retried once it is reachable: the lock is free long before its lease ends", async () => {
    const cutter = await startCutter(inject("pgUrl"));
    const pool = proxiedPool(cutter.url);
    const { locks } = makePgLocks(pool);
    const { locks: theirs } = makePgLocks(direct);
    const res = uniq("pg-release-lost");
    try {
      const mine = await locks.acquire(res, { leaseMs: LEASE_MS });
      cutter.cutNext("request");
      const err = await mine.release().catch((e: unknown) => e);
      expect(isPgUnavailable(err)).toBe(true);
      expect(cutter.cut).toBe("before the server read it");

      const h = await theirs.acquire(res, { waitMs: WAIT_MS });
      expect(h.isHeld()).toBe(true);
      await h.release();
    } finally {
      await locks.close();
      await theirs.close();
      await pool.end();
      await cutter.close();
    }
  });

  it("isPgUnavailable: no answer is unavailable; a SQL error is the server's answer", async () => {
    const refused = new pg.Pool({ connectionString: "postgres://nobody@127.0.0.1:1/none" });
    const noServer = await refused.query("SELECT 1").catch((e: unknown) => e);
    await refused.end();
    expect(isPgUnavailable(noServer)).toBe(true);
    const sqlError = await direct.query(`SELECT nope FROM ${TABLE}`).catch((e: unknown) => e);
    expect(isPgUnavailable(sqlError)).toBe(false);
    expect(
      isPgUnavailable(new Error("boom", { cause: new Error("Connection terminated unexpectedly") })),
    ).toBe(true);
    expect(isPgUnavailable(Object.assign(new Error("terminating connection"), { code: "57P01" }))).toBe(true);
    expect(isPgUnavailable(undefined)).toBe(false);
  });
});

function proxiedPool(url: string): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pool.on("error", () => {}); // the cut client reports here; unheard, it would crash the test process
  return pool;
}

type CutWhen = "reply" | "request";

/**
 * A TCP proxy to PostgreSQL that, once armed, cuts the next connection to carry a message: on the server's
 * reply (the statement ran and committed) or on the client's request (never forwarded). Once only.
 */
async function startCutter(targetUrl: string) {
  const target = new URL(targetUrl);
  const sockets = new Set<net.Socket>();
  let armed: CutWhen | undefined;
  let cut: string | undefined;
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port), target.hostname);
    sockets.add(client).add(upstream);
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on("data", (d) => {
      if (armed === "request") {
        armed = undefined;
        cut = "before the server read it";
        return end();
      }
      upstream.write(d);
    });
    upstream.on("data", (d) => {
      if (armed === "reply") {
        armed = undefined;
        cut = "after the server answered";
        return end();
      }
      client.write(d);
    });
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  const url = new URL(targetUrl);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  return {
    url: url.toString(),
    get cut() {
      return cut;
    },
    cutNext(when: CutWhen) {
      armed = when;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
