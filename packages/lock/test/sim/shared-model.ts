import { queueKeyOf, queueLeasesKeyOf } from "../../src/resource.js";
import type { ModelRedis } from "./model.js";

/**
 * The shared-lock scripts (semaphore permits, read and write holds: src/redis/scripts/shared-*.ts) over the
 * same model of Redis as the mutex, one method per script, written from the Lua line by line: the same
 * commands in the same order, so the key, its fields and its TTL come out as Redis leaves them.
 * shared-model-vs-redis.test.ts holds it to redis-server running the real scripts.
 */
export type SharedMode = "permit" | "read" | "write";

/** A semaphore's queue keys and release channel (shared-acquire.ts KEYS[3..5]), and its entries' lease. */
export interface SharedQueue {
  q: string;
  qt: string;
  ch: string;
  qlease: number;
}

/** The queue keys of the lock hash `k` (resource.ts queueKeyOf / queueLeasesKeyOf). */
export const queueOf = (k: string): { q: string; qt: string } => ({
  q: queueKeyOf(k),
  qt: queueLeasesKeyOf(k),
});

/** One holder's field `reads|writes|expiresAt|token` (shared-body.ts); `e` is Redis time in ms. */
export interface Hold {
  r: number;
  w: number;
  e: number;
  t: number;
}

/** What `holders` learns in one pass (shared-body.ts): ended leases are dropped on the way. */
interface Holders {
  n: number;
  writers: number;
  soonest: number | undefined;
  latest: number;
  mine: Hold | undefined;
  writerWaits: number;
  waiting: boolean;
}

const MARKS = new Set(["~waiters", "~writer-waits", "~writer-by", "~permits"]);

/** holder_of: the Lua pattern `^(%d+)|(%d+)|(%d+)|(%d+)$`; the scripts never write anything else. */
export function holdOf(v: string): Hold {
  const m = /^(\d+)\|(\d+)\|(\d+)\|(\d+)$/.exec(v);
  if (!m) throw new Error(`sim: not a holder field: ${v}`);
  return { r: Number(m[1]), w: Number(m[2]), e: Number(m[3]), t: Number(m[4]) };
}

const holdValue = (h: Hold) => `${h.r}|${h.w}|${h.e}|${h.t}`;

export class SharedModel {
  /**
   * Key → the Redis ms of its latest downgrade: a release of a write hold whose owner keeps read holds. Not
   * Redis state: the simulation names the cause of a lost wake-up with it (kinds-check.ts).
   */
  readonly downgrades = new Map<string, number>();
  /** Semaphore leaves whose successor took the leaver's place (not Redis state: the run reports it). */
  placesPassed = 0;
  /** Semaphore releases that granted the freed permit to their process's next waiter (reported likewise). */
  permitsHanded = 0;

  constructor(private readonly redis: () => ModelRedis) {}

  private holders(k: string, o: string, now: number): Holders {
    const m = this.redis();
    const s: Holders = {
      n: 0,
      writers: 0,
      soonest: undefined,
      latest: 0,
      mine: undefined,
      writerWaits: 0,
      waiting: false,
    };
    for (const [f, v] of [...(m.hash(k) ?? [])]) {
      if (f === "~writer-waits") s.writerWaits = Number(v);
      else if (f === "~waiters") s.waiting = true;
      else if (f !== "~permits" && f !== "~writer-by") {
        const h = holdOf(v);
        if (h.e <= now) m.hdel(k, f);
        else {
          s.n++;
          if (h.w > 0) s.writers++;
          if (s.soonest === undefined || h.e < s.soonest) s.soonest = h.e;
          if (h.e > s.latest) s.latest = h.e;
          if (f === o) s.mine = h;
        }
      }
    }
    return s;
  }

  private keepAlive(k: string, latest: number, writerWaits: number, now: number): void {
    const until = Math.max(latest, writerWaits);
    if (until <= now) this.redis().del(k);
    else this.redis().pexpire(k, until - now);
  }

  /** shared-acquire.ts: [1, count, token] granted or re-entered | [0, pttl, 0] refused. */
  acquire(
    k: string,
    f: string,
    queue: SharedQueue,
    o: string,
    lease: number,
    more: boolean,
    mode: SharedMode,
    permits: number,
    writerMark: number,
    join: boolean,
  ): [number, number, number] {
    const { q, qt, ch, qlease } = queue;
    const m = this.redis();
    const now = m.nowMs();
    const s = this.holders(k, o, now);
    const ends = now + lease;
    if (mode === "permit") m.hsetField(k, "~permits", String(permits));
    const h = s.mine;
    if (h && join && mode === "permit") {
      if (ends > h.e) h.e = ends;
      m.hsetField(k, o, holdValue(h));
      if (more) m.hsetField(k, "~waiters", "1");
      this.keepAlive(k, Math.max(s.latest, h.e), s.writerWaits, now);
      return [1, h.r, h.t];
    }
    if (h && (mode !== "write" || h.w > 0 || s.n === 1)) {
      let writerWaits = s.writerWaits;
      if (mode === "write" && h.w === 0) {
        m.hdel(k, "~writer-waits");
        m.hdel(k, "~writer-by");
        if (writerWaits > now && s.waiting) m.published.push([ch, "1"]);
        writerWaits = 0;
      }
      if (mode === "write") h.w++;
      else h.r++;
      if (ends > h.e) h.e = ends;
      m.hsetField(k, o, holdValue(h));
      if (more) m.hsetField(k, "~waiters", "1");
      this.keepAlive(k, Math.max(s.latest, h.e), writerWaits, now);
      return [1, h.r + h.w, h.t];
    }
    let free =
      mode === "permit"
        ? s.n < permits
        : mode === "read"
          ? s.writers === 0 && s.writerWaits <= now
          : s.n === 0;
    let entryEnds: number | undefined;
    if (free && mode === "permit") {
      const [ahead, soonest] = this.queuedAhead(q, qt, o, now);
      entryEnds = soonest;
      free = ahead < permits - s.n;
    }
    if (!free) {
      m.hsetField(k, "~waiters", "1");
      if (join) m.keepEntry(q, qt, o, now, qlease);
      let writerWaits = s.writerWaits;
      if (mode === "write") {
        writerWaits = Math.max(writerWaits, now + writerMark);
        const by = this.writerBy(k, o, s.writerWaits);
        m.hsetField(k, "~writer-waits", String(writerWaits));
        m.hsetField(k, "~writer-by", by);
      }
      this.keepAlive(k, s.latest, writerWaits, now);
      let nextEnd = s.soonest ?? writerWaits;
      if (entryEnds !== undefined && (nextEnd === 0 || entryEnds < nextEnd)) nextEnd = entryEnds;
      if (mode === "read" && s.writers === 0) nextEnd = writerWaits;
      return [0, Math.max(1, nextEnd - now), 0];
    }
    const token = m.nextToken(f);
    let othersQueue = false;
    if (mode === "permit" && m.list(q) !== undefined) {
      m.dropEntry(q, qt, o);
      othersQueue = (m.list(q)?.length ?? 0) > 0;
      if (s.n + 1 < permits && othersQueue) m.published.push([ch, "1"]);
    }
    let writerWaits = s.writerWaits;
    if (mode === "write") {
      m.hdel(k, "~writer-waits");
      m.hdel(k, "~writer-by");
      if (writerWaits > now && s.waiting) m.published.push([ch, "1"]);
      writerWaits = 0;
    }
    const mine = mode === "write" ? { r: 0, w: 1, e: ends, t: token } : { r: 1, w: 0, e: ends, t: token };
    m.hsetField(k, o, holdValue(mine));
    if (more || othersQueue) m.hsetField(k, "~waiters", "1");
    this.keepAlive(k, Math.max(s.latest, ends), writerWaits, now);
    return [1, 1, token];
  }

  /**
   * shared-release.ts: [0, 0] not-owner | [1, left] decremented | [2, 0] released (publishes if marked: `1`, or
   * `n:<owners>` when a semaphore's free permits are all owed to queued entries) | [4, token] released, and the
   * permit granted to `next` (the releasing process's next waiter) as its own attempt would have been.
   */
  release(
    k: string,
    ch: string,
    q: string,
    qt: string,
    f: string,
    o: string,
    mode: "read" | "write",
    token: string,
    next = "",
    nextLease = 0,
    qlease = 0,
  ): [number, number, number?] {
    const m = this.redis();
    const v = m.hash(k)?.get(o);
    if (v === undefined) return [0, 0];
    const now = m.nowMs();
    const h = holdOf(v);
    if (h.e <= now || (token !== "" && String(h.t) !== token)) return [0, 0];
    if (mode === "write") {
      if (h.w === 0) return [0, 0];
      h.w--;
    } else {
      if (h.r === 0) return [0, 0];
      h.r--;
    }
    if (h.r + h.w > 0) {
      m.hsetField(k, o, holdValue(h));
      if (mode === "write" && h.w === 0) {
        this.downgrades.set(k, now);
        if (m.hash(k)?.has("~waiters")) {
          m.hdel(k, "~waiters");
          m.published.push([ch, "1"]);
        }
      }
      return [1, h.r + h.w];
    }
    m.hdel(k, o);
    const s = this.holders(k, o, now);
    if (next !== "") {
      const permits = Number(m.hash(k)?.get("~permits") ?? "0");
      if (s.n < permits && this.queuedAhead(q, qt, next, now)[0] < permits - s.n) {
        const granted = m.nextToken(f);
        let othersQueue = false;
        if (m.list(q) !== undefined) {
          m.dropEntry(q, qt, next);
          othersQueue = (m.list(q)?.length ?? 0) > 0;
          if (s.n + 1 < permits && othersQueue) m.published.push([ch, "1"]);
        }
        const ends = now + nextLease;
        m.hsetField(k, next, holdValue({ r: 1, w: 0, e: ends, t: granted }));
        m.hsetField(k, "~waiters", "1");
        this.keepAlive(k, Math.max(s.latest, ends), s.writerWaits, now);
        this.permitsHanded++;
        return [4, granted, permits - s.n - 1];
      }
      m.keepEntry(q, qt, next, now, qlease);
      m.hsetField(k, "~waiters", "1");
      s.waiting = true;
    }
    if (s.waiting) {
      const owed = this.owedEntries(k, q, qt, s.n, now);
      if (owed) m.published.push([ch, `n:${owed.join(" ")}`]);
      else {
        m.hdel(k, "~waiters");
        m.published.push([ch, "1"]);
      }
    }
    this.keepAlive(k, s.latest, s.writerWaits, now);
    return [2, 0];
  }

  /** shared-body.ts owed_entries: the live entries every free permit is owed to, or undefined. */
  private owedEntries(k: string, q: string, qt: string, n: number, now: number): string[] | undefined {
    const m = this.redis();
    const free = Number(m.hash(k)?.get("~permits") ?? "0") - n;
    if (free <= 0) return undefined;
    const owed: string[] = [];
    for (const e of [...(m.list(q) ?? [])]) {
      if (Number(m.hash(qt)?.get(e) ?? "0") < now) m.dropEntry(q, qt, e);
      else {
        owed.push(e);
        if (owed.length === free) return owed;
      }
    }
    return undefined;
  }

  /** shared-body.ts writer_by: `owner|before`, kept as it is when o set the mark last already. */
  private writerBy(k: string, o: string, found: number): string {
    const by = this.redis().hash(k)?.get("~writer-by");
    const m = by === undefined ? null : /^(.*)\|(\d+)$/.exec(by);
    if (m && m[1] === o) return by!;
    return `${o}|${found}`;
  }

  /** shared-withdraw.ts: 1 when the owner set the mark last; it puts back the mark it found (or none). */
  withdraw(k: string, ch: string, o: string): number {
    const m = this.redis();
    const by = m.hash(k)?.get("~writer-by");
    const mine = by === undefined ? null : /^(.*)\|(\d+)$/.exec(by);
    if (!mine || mine[1] !== o) return 0;
    const now = m.nowMs();
    const s = this.holders(k, o, now);
    let writerWaits = Number(mine[2]);
    m.hdel(k, "~writer-by");
    if (writerWaits > now) m.hsetField(k, "~writer-waits", String(writerWaits));
    else {
      writerWaits = 0;
      m.hdel(k, "~writer-waits");
    }
    if (s.waiting && s.writers === 0 && s.writerWaits > now) m.published.push([ch, "1"]);
    this.keepAlive(k, s.latest, writerWaits, now);
    return 1;
  }

  /**
   * shared-leave.ts: 2 when the successor took the owner's place; 1 when the owner had an entry (then `1` is
   * announced if entries remain), else 0.
   */
  leave(q: string, qt: string, ch: string, o: string, succ = "", qlease = 0): number {
    const m = this.redis();
    const items = m.list(q);
    const pos = items?.indexOf(o) ?? -1;
    if (items && pos !== -1 && succ !== "" && !items.includes(succ)) {
      items[pos] = succ;
      m.hdel(qt, o);
      m.keepEntry(q, qt, succ, m.nowMs(), qlease);
      this.placesPassed++;
      return 2;
    }
    const had = items?.includes(o) ? 1 : 0;
    m.dropEntry(q, qt, o);
    if (had > 0 && (m.list(q)?.length ?? 0) > 0) m.published.push([ch, "1"]);
    return had;
  }

  /** shared-body.ts queued_ahead: live entries ahead of o (all when o has none), soonest end; drops dead ones. */
  private queuedAhead(q: string, qt: string, o: string, now: number): [number, number | undefined] {
    const m = this.redis();
    let ahead = 0;
    let soonest: number | undefined;
    for (const e of [...(m.list(q) ?? [])]) {
      if (e === o) return [ahead, soonest];
      const ends = Number(m.hash(qt)?.get(e) ?? "0");
      if (ends < now) m.dropEntry(q, qt, e);
      else {
        ahead++;
        if (soonest === undefined || ends < soonest) soonest = ends;
      }
    }
    return [ahead, soonest];
  }

  /**
   * shared-renew-many.ts: 1 per lock whose owner's hold is live (its lease now ends no sooner than now +
   * lease), else 0. A key of the wrong type fails the call after the locks before it were renewed.
   */
  renewMany(items: readonly { key: string; owner: string; lease: number }[]): number[] {
    const m = this.redis();
    const now = m.nowMs();
    return items.map(({ key, owner, lease }) => {
      const v = m.hash(key)?.get(owner);
      if (v === undefined) return 0;
      const h = holdOf(v);
      if (h.e <= now) {
        m.hdel(key, owner);
        return 0;
      }
      if (now + lease > h.e) h.e = now + lease;
      m.hsetField(key, owner, holdValue(h));
      if (m.pttl(key) < h.e - now) m.pexpire(key, h.e - now);
      return 1;
    });
  }

  /** The live holds of a key (lease not ended in Redis time), read without changing anything. */
  live(k: string): Map<string, Hold> {
    const now = this.redis().nowMs();
    const out = new Map<string, Hold>();
    for (const [f, v] of this.redis().hash(k) ?? []) {
      if (MARKS.has(f)) continue;
      const h = holdOf(v);
      if (h.e > now) out.set(f, h);
    }
    return out;
  }

  /** Live queue entries ahead of `owner`'s entry (all of them when it has none) in the semaphore `k`'s queue. */
  liveAhead(k: string, owner: string | undefined, queue = queueOf(k)): number {
    const { q, qt } = queue;
    const m = this.redis();
    const now = m.nowMs();
    let ahead = 0;
    // As queued_ahead: the walk stops at the owner's own entry, live or not.
    for (const e of m.list(q) ?? []) {
      if (e === owner) break;
      if (Number(m.hash(qt)?.get(e) ?? "0") >= now) ahead++;
    }
    return ahead;
  }

  /** Whether an attempt by `owner` in `mode` would be granted now (shared-acquire.ts), changing nothing. */
  wouldGrant(
    k: string,
    owner: string | undefined,
    mode: SharedMode,
    permits: number,
    queue?: { q: string; qt: string },
  ): boolean {
    const now = this.redis().nowMs();
    const holds = this.live(k);
    const mine = owner === undefined ? undefined : holds.get(owner);
    if (mine && (mode !== "write" || mine.w > 0 || holds.size === 1)) return true;
    if (mode === "permit") return holds.size + this.liveAhead(k, owner, queue) < permits;
    if (mode === "write") return holds.size === 0;
    const writerWaits = Number(this.redis().hash(k)?.get("~writer-waits") ?? "0");
    return [...holds.values()].every((h) => h.w === 0) && writerWaits <= now;
  }
}
