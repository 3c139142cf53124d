// One process of the chaos run (chaos.test.ts): CALLERS callers take the lock of KIND in every way the API offers
// (acquire with a wait, acquire aborted by a signal, tryAcquire, withLock, a re-entry inside the hold), on an
// ioredis client with its defaults, and report every call and hold to the parent on the machine's monotonic clock
// (one clock for every process on Linux). A hold is reported as held at a time only if isHeld() was still true
// after that time was read: the parent checks those intervals against the lock's capacity.
import { Redis } from "ioredis";
import pg from "pg";
import { createLocks, isRedisUnavailable } from "../../dist/index.js";
import { createPgLocks } from "../../dist/pg.js";

const env = process.env;
const kind = env.KIND;
const permits = Number(env.PERMITS ?? 1);
const resource = env.RESOURCE;
const leaseMs = Number(env.LEASE_MS);
const now = () => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const redis = new Redis(env.REDIS_URL, { connectionName: `chaos-${process.pid}` });
redis.on("error", () => {});
// The handoff settings vary by process (LOCKS_OPTIONS, drawn by the parent): processes may differ in them.
const options = { leaseMs, retry: { maxMs: 100 }, ...JSON.parse(env.LOCKS_OPTIONS ?? "{}") };
// KIND pg: a mutex on PostgreSQL, its connections named so that the parent can terminate them.
const pool =
  kind === "pg"
    ? new pg.Pool({ connectionString: env.PG_URL, max: 4, application_name: `chaos-${process.pid}` })
    : undefined;
pool?.on("error", () => {});
const create = () =>
  pool ? createPgLocks({ pool, table: env.PG_TABLE, ...options }) : createLocks({ redis, ...options });

let stopping = false;
let seq = 0;
const send = (m) => process.send?.(m);
// The parent may close it at any moment (op "close"): calls in flight on it end, new ones go to a fresh one.
let locks = create();
process.on("unhandledRejection", (err) => {
  send({ t: "crash", error: String(err?.stack ?? err) });
  process.exit(1);
});

/** Errors a call may end with; anything else is a bug the parent reports. */
const EXPECTED = new Set([
  "LockTimeoutError",
  "AbortError",
  "ReplyLostError",
  "LockLostError",
  "LockReleasedError",
  "LocksClosedError",
]);
/** PostgreSQL's connection errors: class 08, an administrator's termination (57P01), the client's own. */
const pgUnavailable = (err) =>
  /^08|^57P01$/.test(err?.code ?? "") ||
  /connection terminated|connection error|terminating connection/i.test(err?.message);
const expected = (err) => EXPECTED.has(err?.name) || isRedisUnavailable(err) || pgUnavailable(err);

function target(r, locks) {
  if (kind === "mutex" || kind === "pg") return { lock: locks, exclusive: true, args: [resource] };
  if (kind === "semaphore") return { lock: locks.semaphore(resource, permits), exclusive: false, args: [] };
  const write = r() < 0.3;
  const rw = locks.readWrite(resource);
  return { lock: write ? rw.write : rw.read, exclusive: write, args: [] };
}

async function hold(h, exclusive, r, locks) {
  const id = ++seq;
  send({ t: "hold", id, owner: h.owner, exclusive, start: now() });
  const mark = () => {
    const at = now();
    if (h.isHeld()) send({ t: "held", id, at });
  };
  const chunks = 1 + Math.floor(r() * 3);
  for (let i = 0; i < chunks; i++) {
    await sleep(r() * 8);
    mark();
  }
  // A re-entry under the same owner (a mutex or a permit; a reader may re-enter as reader).
  if (r() < 0.2 && kind !== "rw") {
    const t0 = now();
    try {
      const inner = await (kind !== "semaphore"
        ? locks.acquire(resource, { owner: h.owner, waitMs: 300 })
        : locks.semaphore(resource, permits).acquire({ owner: h.owner, waitMs: 300 }));
      mark();
      await inner.release();
    } catch (err) {
      if (!expected(err)) send({ t: "unexpected", where: "re-entry", error: String(err?.stack ?? err) });
    }
    send({ t: "call", op: "reentry", start: t0, end: now(), boundMs: 300 });
  }
  mark();
}

async function caller() {
  const r = Math.random;
  while (!stopping) {
    const l = locks;
    const { lock, exclusive, args } = target(r, l);
    const pick = r();
    const start = now();
    let op;
    let boundMs;
    try {
      if (pick < 0.2) {
        op = "withLock";
        boundMs = 100 + Math.floor(r() * 700);
        await lock.withLock(...args, (h) => hold(h, exclusive, r, l), { waitMs: boundMs });
        // withLock's bound includes the hold (at most ~24 ms and a 300 ms re-entry).
        boundMs += 400;
      } else {
        let h;
        if (pick < 0.6) {
          op = "acquire";
          boundMs = 100 + Math.floor(r() * 700);
          h = await lock.acquire(...args, { waitMs: boundMs });
        } else if (pick < 0.8) {
          op = "abort";
          boundMs = 20 + Math.floor(r() * 380);
          const ac = new AbortController();
          setTimeout(() => ac.abort(), boundMs).unref();
          h = await lock.acquire(...args, { waitMs: 5_000, signal: ac.signal });
        } else {
          op = "tryAcquire";
          boundMs = 0;
          h = await lock.tryAcquire(...args);
        }
        send({ t: "call", op, start, end: now(), boundMs });
        if (h) {
          await hold(h, exclusive, r, l);
          const t0 = now();
          await h.release().catch((err) => {
            if (!expected(err)) send({ t: "unexpected", where: "release", error: String(err?.stack ?? err) });
          });
          send({ t: "call", op: "release", start: t0, end: now(), boundMs: 0 });
        }
        continue;
      }
    } catch (err) {
      if (!expected(err)) send({ t: "unexpected", where: op, error: String(err?.stack ?? err) });
    }
    send({ t: "call", op, start, end: now(), boundMs });
  }
}

process.on("message", async (m) => {
  if (m.op === "close") {
    const closing = locks;
    locks = create();
    await closing.close();
    return;
  }
  if (m.op !== "stop") return;
  stopping = true;
  await running;
  await locks.close();
  redis.disconnect();
  await pool?.end();
  send({ t: "stopped" });
});

const running = Promise.all(Array.from({ length: Number(env.CALLERS) }, () => caller()));
send({ t: "ready" });
