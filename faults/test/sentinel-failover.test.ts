// Issue 17 §3: a Sentinel failover mid-sale. One primary, one replica and three Sentinels
// (`redis-server --sentinel`, down-after-milliseconds 1 s, failover-timeout 2 s), the library on ioredis
// Sentinel clients (`sentinels`, `name`): two Locks on two connections sell one product, six workers.
//
// What the failover may lose. Replication is asynchronous, so the replica may be promoted without the
// primary's last writes: lock grants and releases, `fence:` increments, stock decrements. To make that
// happen every run instead of by luck, replication is cut before the kill (the replica is given a wrong
// `masterauth` and its link killed, so it cannot resync) and the burst runs on until a few locks were
// granted on the primary alone; then the primary is SIGKILLed.
//
// Tokens. A fresh token is max(last + 1, Redis TIME in µs). The promoted replica's `fence:` counter is
// behind (the test reads it from the replica just before the kill), but its clock is not: a failover takes
// at least down-after-milliseconds, far longer than any skew between two servers' clocks, so its first token
// is above every token the lost primary issued. Asserted: every token granted, before, during and after the
// failover, in the order the grants arrived, strictly increases (so none is issued twice). On one machine the
// clocks are the same; across machines the assumption is NTP-synchronised clocks whose skew stays below the
// failover time.
//
// What "no oversell" means here. The stock lives in the same Redis, so a decrement the primary answered may
// be lost with it, and the unit sold again by the new primary: counted as a sale, that is an oversell no lock
// prevents. A sale is therefore confirmed only when `WAIT 1` says the replica has it (fenced-sale.ts); a write
// answered without that acknowledgement is unconfirmed, one never answered unknown. Asserted on the new
// primary: the stock never goes below 0; no unit is confirmed twice (every confirmed sale left a different
// stock value behind); every confirmed sale survived (taken ≥ confirmed); and nothing was taken that no sale
// attempt can account for (taken ≤ confirmed + unconfirmed + unknown). The figure shows how many answered
// sales the failover undid: counting those would have oversold. Writes are fenced (fencedRead registers the
// holder's token, fencedWrite refuses older ones), so a holder whose lock the new primary never knew cannot
// overwrite what a newer holder read.
//
// Holds. A hold whose release Redis answered "released" was held on the answering server from grant to
// release; no two such holds overlap. Holds granted by the lost primary end unconfirmed: whether they
// overlapped a grant of the new one is exactly what asynchronous replication cannot promise, and what the
// fencing above makes harmless.
//
// Recovery. Measured from the kill: Sentinel's +sdown, +odown and +switch-master, and the first lock granted
// by the new primary (a probe trying a fresh resource every 25 ms on its own Sentinel client). Asserted: the
// lock API serves within 1.5 s of the switch without any restart. After it: waiting (a waiter woken by the
// release message on the new primary), list(), and a watchdog lock taken before the kill (with waitReplicas,
// so its grant was on the replica) still held and renewed on the new primary. The killed node is restarted
// as the new primary's replica, so sales after the failover can be confirmed again.
import { setTimeout as sleep } from "node:timers/promises";
import { createLocks, fenceKey, type LockEvent, type Locks } from "@lockyard/lock";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type SentinelGroup, startSentinelGroup } from "../../scripts/lib/sentinel.mjs";
import { type HoldRecord, type SaleOutcome, sellOne } from "../src/fenced-sale.js";
import { figure } from "../src/figures.js";
import { watchSentinels } from "../src/sentinel-events.js";

const DOWN_AFTER_MS = 1_000;
const FAILOVER_TIMEOUT_MS = 2_000;
const INITIAL = 120;
const WORKERS = 6;
const LEASE_MS = 1_000;
/** Longer than a failover, so the watchdog lock outlives it: its local deadline is lease − lease/3 after the kill. */
const WATCHED_LEASE_MS = 12_000;
const WORK_MS = 5;
const CONFIRM_MS = 200;
const CUT_AFTER_CONFIRMED = 30;
const WINDOW_GRANTS = 3;
const SERVES_AFTER_SWITCH_MS = 1_500;
const RESOURCE = "sentinel-sale";
const STOCK = "stock:{sentinel-sale}";
const WATCHED = "sentinel-watched";

let group: SentinelGroup;
const clients: Redis[] = [];

/** An ioredis Sentinel client as an application would configure one for locks (see the lock README). */
function sentinelClient(tag: string): Redis {
  const redis = new Redis({
    sentinels: group.sentinels,
    name: group.name,
    connectionName: tag,
    // Ask the Sentinels again every 100 ms while the primary is gone, so the new one is found soon.
    retryStrategy: () => 100,
    sentinelRetryStrategy: () => 100,
    // A write whose reply died with the primary is not run a second time on the new one, and a command
    // queued while there is no primary fails after commandTimeout instead of waiting without bound.
    autoResendUnfulfilledCommands: false,
    commandTimeout: 1_500,
  });
  redis.on("error", () => {});
  clients.push(redis);
  return redis;
}

async function until(what: string, done: () => boolean | Promise<boolean>, timeoutMs: number) {
  const deadline = performance.now() + timeoutMs;
  while (!(await done())) {
    if (performance.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(10);
  }
}

/** Pairs of holds Redis confirmed ("released") whose client-side intervals overlap. */
function overlapping(holds: HoldRecord[]): [HoldRecord, HoldRecord][] {
  const sure = holds.filter((h) => h.released).sort((x, y) => x.start - y.start);
  const out: [HoldRecord, HoldRecord][] = [];
  for (let i = 1; i < sure.length; i++)
    if (sure[i]!.start < sure[i - 1]!.end) out.push([sure[i - 1]!, sure[i]!]);
  return out;
}

beforeAll(async () => {
  group = await startSentinelGroup({ downAfterMs: DOWN_AFTER_MS, failoverTimeoutMs: FAILOVER_TIMEOUT_MS });
}, 60_000);

afterAll(async () => {
  for (const c of clients) c.disconnect();
  await group?.stop();
});

it("SIGKILL of the Sentinel primary mid-sale: tokens keep increasing, no unit sold twice, locks serve again", async () => {
  const [a, b] = [sentinelClient("sale-a"), sentinelClient("sale-b")];
  const probeClient = sentinelClient("probe");
  const grants: { token: number; at: number }[] = [];
  const renewedAt: number[] = [];
  const onEvent = (e: LockEvent) => {
    if (e.type === "acquired" && e.resource === RESOURCE)
      grants.push({ token: e.token!, at: performance.now() });
    if (e.type === "renewed" && e.resource === WATCHED) renewedAt.push(performance.now());
  };
  const locksA = createLocks({ redis: a, leaseMs: LEASE_MS, instanceId: "sale-a", onEvent });
  const locksB = createLocks({ redis: b, leaseMs: LEASE_MS, instanceId: "sale-b", onEvent });
  const locksW = createLocks({
    redis: a,
    leaseMs: WATCHED_LEASE_MS,
    waitReplicas: 1,
    instanceId: "watched",
    onEvent,
  });
  const probe = createLocks({ redis: probeClient, leaseMs: LEASE_MS, instanceId: "probe" });
  const all: Locks[] = [locksA, locksB, locksW, probe];

  await a.hset(STOCK, { qty: INITIAL, fence: 0 });
  expect(Number(await a.call("WAIT", 1, 1_000))).toBe(1);
  const watched = await locksW.acquire(WATCHED);
  const sentinelEvents = await watchSentinels(group.sentinels);

  // The burst: six workers over two connections until the stock is gone.
  const outcomes: (SaleOutcome & { at: number })[] = [];
  const holds: HoldRecord[] = [];
  let soldOut = false;
  const stopBy = performance.now() + 40_000;
  const worker = async (locks: Locks, redis: Redis) => {
    while (!soldOut && performance.now() < stopBy) {
      const o = await sellOne({
        locks,
        redis,
        resource: RESOURCE,
        stockKey: STOCK,
        workMs: WORK_MS,
        confirmMs: CONFIRM_MS,
        holds,
      });
      outcomes.push({ ...o, at: performance.now() });
      if (o.kind === "sold-out") soldOut = true;
      if (o.kind === "no-lock") await sleep(20);
    }
  };
  const burst = Promise.all(
    Array.from({ length: WORKERS }, (_, i) => (i % 2 === 0 ? worker(locksA, a) : worker(locksB, b))),
  );

  // Cut replication once the burst is under way, let the primary grant a few locks alone, then kill it.
  const confirmed = () => outcomes.filter((o) => o.kind === "confirmed").length;
  await until("sales confirmed before the cut", () => confirmed() >= CUT_AFTER_CONFIRMED, 20_000);
  const primary = new Redis(group.primary.port, { lazyConnect: true });
  const replica = new Redis(group.replicas[0]!.port, { lazyConnect: true });
  clients.push(primary, replica);
  for (const c of [primary, replica]) c.on("error", () => {});
  await replica.config("SET", "masterauth", "not-the-primary-password");
  await primary.call("CLIENT", "KILL", "TYPE", "replica");
  const cutAt = performance.now();
  await until(
    "grants on the primary alone",
    () => grants.filter((g) => g.at > cutAt).length >= WINDOW_GRANTS,
    5_000,
  );
  const replicaFence = Number(await replica.get(fenceKey(RESOURCE)));
  const replicaLink = await replica.info("replication");
  expect(replicaLink).toContain("master_link_status:down");
  await group.primary.kill("SIGKILL");
  const killedAt = performance.now();
  primary.disconnect();
  const lastBeforeKill = Math.max(...grants.filter((g) => g.at < killedAt).map((g) => g.token));
  const lostGrants = grants.filter((g) => g.at > cutAt && g.at < killedAt).length;

  // The lock API back: a probe on a fresh resource every 25 ms, answered only by a new primary.
  let recoveredAt = 0;
  for (let i = 0; recoveredAt === 0 && performance.now() - killedAt < 30_000; i++) {
    const h = await probe.tryAcquire(`sentinel-probe-${i}`).catch(() => null);
    if (h) {
      recoveredAt = performance.now();
      await h.release();
    } else await sleep(25);
  }
  const switchedAt = await sentinelEvents.switched;
  sentinelEvents.close();
  const promoted = await group.masterAddr();
  expect(promoted.port).toBe(group.replicas[0]!.port);
  // The killed node comes back as the new primary's replica (what Sentinel would make of it too).
  await group.startReplica(group.primary.port, promoted.port);
  await burst;

  // Waiting on the new primary: a waiter woken by the release message, not by its 500 ms fallback. First
  // both of B's connections (commands, and the subscriber duplicated from it) are back on the new primary.
  const onNew = new Redis(promoted.port, promoted.host);
  clients.push(onNew);
  await until(
    "sale-b and its subscriber on the new primary",
    async () => ((await onNew.client("LIST")) as string).split("name=sale-b ").length - 1 >= 2,
    10_000,
  );
  const holder = await locksA.acquire("sentinel-wait", { leaseMs: 5_000 });
  const waiting = locksB.acquire("sentinel-wait", { waitMs: 3_000 });
  await sleep(100);
  const releasedAt = performance.now();
  await holder.release();
  const waiter = await waiting;
  const wokenMs = performance.now() - releasedAt;

  // list() on the new primary shows the waiter's lock with its owner and token.
  const listed = await locksA.list({ match: "sentinel-wait" });
  expect(listed).toMatchObject([{ resource: "sentinel-wait", owners: [{ owner: waiter.owner, count: 1 }] }]);
  expect(listed[0]!.token).toBe(waiter.token);
  await waiter.release();

  // The watchdog lock lived through the failover and is renewed on the new primary.
  await until("a renewal on the new primary", () => renewedAt.some((t) => t > recoveredAt), 6_000);
  expect(watched.isHeld()).toBe(true);
  expect(watched.signal.aborted).toBe(false);
  expect(await onNew.hget(`lock:{${WATCHED}}`, watched.owner)).toBe("1");
  expect(await watched.release()).toBe("released");
  // waitReplicas works again once the new primary has a replica.
  const strict = await locksW.acquire("sentinel-strict");
  expect(await strict.release()).toBe("released");

  const finalQty = Number(await onNew.hget(STOCK, "qty"));
  for (const l of all) await l.close();

  const count = (kind: SaleOutcome["kind"]) => outcomes.filter((o) => o.kind === kind).length;
  type Sale = Extract<SaleOutcome, { qtyAfter: number }>;
  const sales = outcomes.filter((o): o is Sale & { at: number } => "qtyAfter" in o);
  const sold = sales.filter((o) => o.kind === "confirmed");
  const answered = sales.filter((o) => o.kind === "unconfirmed");
  const taken = INITIAL - finalQty;
  // Sales the old primary answered and the failover undid: the new primary sold the same unit again (a write
  // it answered left the same stock value behind).
  const valuesAfter = new Set(sales.filter((s) => s.writtenAt > killedAt).map((s) => s.qtyAfter));
  const undoneSales = sales.filter((s) => s.writtenAt < killedAt && valuesAfter.has(s.qtyAfter));
  const undone = undoneSales.length;
  const tokens = grants.map((g) => g.token);
  const firstAfter = grants.find((g) => g.at > killedAt)?.token ?? Number.NaN;
  const backwards = tokens.filter((t, i) => i > 0 && t <= tokens[i - 1]!).length;
  const overlaps = overlapping(holds);
  const at = (t: number | undefined) => (t === undefined ? "–" : `${Math.round(t - killedAt)} ms`);
  figure(
    `sentinel failover: primary SIGKILLed mid-sale; +sdown ${at(sentinelEvents.at["+sdown"])}, ` +
      `+odown ${at(sentinelEvents.at["+odown"])}, +switch-master ${at(switchedAt)} after the kill ` +
      `(down-after ${DOWN_AFTER_MS} ms, failover-timeout ${FAILOVER_TIMEOUT_MS} ms); first lock on the new ` +
      `primary ${at(recoveredAt)} after the kill (${Math.round(recoveredAt - switchedAt)} ms after the switch); ` +
      `${outcomes.length} attempts: ${sold.length} confirmed, ${answered.length} unconfirmed ` +
      `(${answered.filter((s) => s.kind === "unconfirmed" && s.waitMoved).length} of them acknowledged by a WAIT the client sent to the new ` +
      `primary after writing to the old one), ` +
      `${count("unknown")} unknown, ${count("stale")} stale, ${count("no-lock")} without the lock; ` +
      `taken ${taken} of ${INITIAL}, final stock ${finalQty}; ${undone} answered sales undone by the failover ` +
      `(oversold had they counted); ${tokens.length} tokens, ${backwards} not above the one before; the new ` +
      `primary's fence counter was ${lostGrants} grants behind (${lastBeforeKill - replicaFence} µs below the ` +
      `last token), its first token ${((firstAfter - lastBeforeKill) / 1000).toFixed(0)} ms above it; ` +
      `waiter woken ${Math.round(wokenMs)} ms after the release; ${overlaps.length} overlapping confirmed holds`,
  );

  // Tokens: strictly increasing in grant order, across the failover, although the fence counter went back.
  expect(lostGrants).toBeGreaterThanOrEqual(WINDOW_GRANTS);
  expect(replicaFence).toBeLessThan(lastBeforeKill);
  expect(backwards).toBe(0);
  expect(new Set(tokens).size).toBe(tokens.length);
  expect(firstAfter).toBeGreaterThan(lastBeforeKill);
  // No oversell.
  expect(finalQty).toBeGreaterThanOrEqual(0);
  expect(new Set(sold.map((s) => s.qtyAfter)).size).toBe(sold.length);
  expect(undoneSales.filter((s) => s.kind === "confirmed")).toEqual([]);
  expect(taken).toBeGreaterThanOrEqual(sold.length);
  expect(taken).toBeLessThanOrEqual(sold.length + answered.length + count("unknown"));
  expect(soldOut).toBe(true);
  expect(overlaps).toEqual([]);
  // Recovery by itself, within the failover.
  expect(recoveredAt).toBeGreaterThan(0);
  expect(recoveredAt - switchedAt).toBeLessThan(SERVES_AFTER_SWITCH_MS);
  expect(wokenMs).toBeLessThan(400);
}, 90_000);
