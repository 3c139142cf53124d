// One lock-protected sale, as the API's redis mode makes it, with the outcome told honestly when Redis may
// fail over under it: acquire with fencedRead → check the stock → fencedWrite −1 → release → WAIT for the
// replica. Used by the Sentinel failover test.
//
// WAIT acknowledges the writes of its own connection only. A Sentinel client that lost its primary between
// the write and WAIT queues WAIT and sends it to the new primary, whose replica then acknowledges a write it
// never saw: so a sale counts as confirmed only when no connection of the client closed in between.
import { setTimeout as sleep } from "node:timers/promises";
import { type FencedReadResult, fencedRead, fencedWrite, type Locks } from "@lockyard/lock";
import type { Redis } from "ioredis";

export type SaleOutcome =
  /** The write took a unit and the replica acknowledged it: it survives a failover. */
  | { kind: "confirmed"; token: number; qtyAfter: number; writtenAt: number }
  /**
   * The primary took the unit, but no replica acknowledged it in time (or WAIT ran on another connection:
   * `waitMoved`): a failover may undo it.
   */
  | { kind: "unconfirmed"; token: number; qtyAfter: number; writtenAt: number; waitMoved: boolean }
  /** The write was sent and no answer came: it may or may not have taken a unit. */
  | { kind: "unknown"; token: number }
  /** Nothing written: the lock was not had, was lost (STALE), or the stock was gone. */
  | { kind: "no-lock" | "stale" | "sold-out" };

/** A hold as the client saw it: from the handle's arrival to the release's sending, and what Redis said. */
export interface HoldRecord {
  owner: string;
  token: number;
  start: number;
  end: number;
  released: boolean;
}

export interface SaleOptions {
  locks: Locks;
  /** The client `locks` runs on: the write and WAIT share its connection, so WAIT covers the write. */
  redis: Redis;
  resource: string;
  stockKey: string;
  workMs: number;
  confirmMs: number;
  holds: HoldRecord[];
}

const closes = new WeakMap<Redis, { n: number }>();

/** How many times the client's connection has closed so far. */
function closesOf(redis: Redis): number {
  let c = closes.get(redis);
  if (!c) {
    const counter = { n: 0 };
    redis.on("close", () => counter.n++);
    closes.set(redis, counter);
    c = counter;
  }
  return c.n;
}

export async function sellOne(o: SaleOptions): Promise<SaleOutcome> {
  let h: Awaited<ReturnType<Locks["acquire"]>>;
  let read: FencedReadResult;
  try {
    h = await o.locks.acquire(o.resource, { waitMs: 5_000, reads: fencedRead(o.stockKey, ["qty"]) });
  } catch {
    return { kind: "no-lock" };
  }
  const hold: HoldRecord = {
    owner: h.owner,
    token: h.token!,
    start: performance.now(),
    end: 0,
    released: false,
  };
  o.holds.push(hold);
  const release = async () => {
    hold.end = performance.now();
    hold.released = (await h.release().catch(() => "error")) === "released";
  };
  try {
    read = (await h.reads) as FencedReadResult;
  } catch {
    await release();
    return { kind: "no-lock" };
  }
  if (read.state !== "held") {
    await release();
    return { kind: read.state === "stale" ? "stale" : "no-lock" };
  }
  if (Number(read.values[0]) <= 0) {
    await release();
    return { kind: "sold-out" };
  }
  await sleep(o.workMs);
  const token = h.token!;
  const connection = closesOf(o.redis);
  const written = await fencedWrite(o.redis, o.stockKey, token, -1).catch(() => null);
  const writtenAt = performance.now();
  await release();
  if (written === null) return { kind: "unknown", token };
  if (!written.ok) return { kind: written.reason === "STALE" ? "stale" : "sold-out" };
  const acked = Number(await o.redis.call("WAIT", 1, o.confirmMs).catch(() => 0));
  const waitMoved = closesOf(o.redis) !== connection;
  const sale = { token, qtyAfter: written.qty, writtenAt };
  if (acked >= 1 && !waitMoved) return { kind: "confirmed", ...sale };
  return { kind: "unconfirmed", ...sale, waitMoved };
}
