/**
 * A TypeScript model of the Redis state the library's scripts touch, one function per script, written from
 * the Lua in src/scripts/. model-vs-redis.test.ts runs the same random operations against this model and a
 * real redis-server and requires identical replies and state, so the simulation's Redis is the real one's
 * semantics, not a guess.
 */
import { handoffChannel } from "../../src/resource.js";

type Value =
  | { kind: "hash"; fields: Map<string, string> }
  | { kind: "string"; value: string }
  | { kind: "list"; items: string[] };

interface Entry {
  value: Value;
  /** Absolute virtual ms, or Infinity. */
  expiresAt: number;
}

const FENCE_RETENTION_MS = 86_400_000;

/** The queue keys an acquire touches (queue.ts), and whether it joins; none by default (a queue-less caller). */
export interface QueueArgs {
  q: string;
  qt: string;
  join: boolean;
  qlease: number;
}
const NO_QUEUE: QueueArgs = { q: "~no-queue", qt: "~no-queue-leases", join: false, qlease: 1 };

/** What a release may hand the lock to (release.ts ARGV[5..8]). */
export interface HandoffArgs {
  q: string;
  qt: string;
  qlease: number;
  next: string;
  nextLease: number;
  /** Grant to `next` while the first live entry has queued for less than this (release.ts ARGV[8]). */
  keepMs: number;
}
const NO_HANDOFF: HandoffArgs = { ...NO_QUEUE, next: "", nextLease: 0, keepMs: 0 };

/** The queue-leases field holding when an entry joined (queue.ts). */
const since = (o: string) => `since ${o}`;

export class ModelRedis {
  private data = new Map<string, Entry>();
  /** Handoffs made: to another process's queued waiter (release code 3), to the releaser's own next (4). */
  /** Grants handed over in a release (to the queue's head, or to the `next` it named), and those a leave found
   * handed to its own waiter, which had given up meanwhile (passed on, or handed over as a release). */
  readonly handoffs = { queued: 0, next: 0, toLeaver: 0 };
  /**
   * Messages the single-Redis scripts published, in order: [channel, message] (`1`, or `c:<owner> <token> <qlease>`
   * on the handoff channel of the owner's instance, which is the third element).
   */
  published: [string, string, string?][] = [];

  constructor(
    private readonly now: () => number,
    /** Redis's own clock in µs (TIME); may be offset from the simulation's. */
    private readonly timeUs: () => number = () => Math.floor(now() * 1000),
  ) {}

  flushAll(): void {
    this.data.clear();
  }

  private get(key: string): Entry | undefined {
    const e = this.data.get(key);
    // Redis keeps a key alive up to and including its expiry ms (keyIsExpired: `now > when`).
    if (e && e.expiresAt < this.now()) {
      this.data.delete(key);
      return undefined;
    }
    return e;
  }

  // hash, list, nowMs, hdel, hsetField, pexpire, nextToken, keepEntry and dropEntry are public for
  // shared-model.ts, which models the shared-lock scripts with the same Redis commands.
  hash(key: string): Map<string, string> | undefined {
    const e = this.get(key);
    if (!e) return undefined;
    if (e.value.kind !== "hash")
      throw new Error("WRONGTYPE Operation against a key holding the wrong kind of value");
    return e.value.fields;
  }

  private str(key: string): string | undefined {
    const e = this.get(key);
    if (!e) return undefined;
    if (e.value.kind !== "string")
      throw new Error("WRONGTYPE Operation against a key holding the wrong kind of value");
    return e.value.value;
  }

  list(key: string): string[] | undefined {
    const e = this.get(key);
    if (!e) return undefined;
    if (e.value.kind !== "list")
      throw new Error("WRONGTYPE Operation against a key holding the wrong kind of value");
    return e.value.items;
  }

  /** Redis TIME in ms, as the scripts compute it (queue.ts now_ms). */
  nowMs(): number {
    return Math.floor(this.timeUs() / 1000);
  }

  // ---- queue.ts ----

  private liveHead(q: string, qt: string, now: number): string | undefined {
    for (;;) {
      const items = this.list(q);
      const head = items?.[0];
      if (head === undefined) return undefined;
      if (Number(this.hash(qt)?.get(head) ?? "0") >= now) return head;
      this.lpop(q);
      this.hdel(qt, head);
      this.hdel(qt, since(head));
    }
  }

  /** join_queue: keepEntry, and a new entry records when it joined. */
  joinQueue(q: string, qt: string, o: string, now: number, qlease: number): void {
    this.keepEntry(q, qt, o, now, qlease, true);
  }

  /** first_other_waited: how long the queue's first entry has waited (ms; -1 none; no join time: since ever). */
  private firstOtherWaited(q: string, qt: string, now: number): number {
    const first = this.list(q)?.[0];
    if (first === undefined) return -1;
    return now - Number(this.hash(qt)?.get(since(first)) ?? "0");
  }

  private keepsTurn(qt: string, head: string, now: number, keepMs: number): boolean {
    return now - Number(this.hash(qt)?.get(since(head)) ?? "0") < keepMs;
  }

  keepEntry(q: string, qt: string, o: string, now: number, qlease: number, recordSince = false): void {
    const items = this.list(q);
    if (!items?.includes(o)) {
      this.rpush(q, o);
      if (recordSince) this.hsetField(qt, since(o), String(now));
    }
    this.hsetField(qt, o, String(now + qlease));
    this.raiseTtl(q, qlease);
    this.raiseTtl(qt, qlease);
  }

  dropEntry(q: string, qt: string, o: string): void {
    const items = this.list(q);
    if (items) {
      const i = items.indexOf(o);
      if (i !== -1) items.splice(i, 1);
      if (items.length === 0) this.data.delete(q);
    }
    this.hdel(qt, o);
    this.hdel(qt, since(o));
  }

  private lpop(key: string): void {
    const items = this.list(key);
    if (!items) return;
    items.shift();
    if (items.length === 0) this.data.delete(key);
  }

  private rpush(key: string, v: string): void {
    const items = this.list(key);
    if (items) items.push(v);
    else this.data.set(key, { value: { kind: "list", items: [v] }, expiresAt: Number.POSITIVE_INFINITY });
  }

  hdel(key: string, field: string): void {
    const h = this.hash(key);
    if (!h) return;
    h.delete(field);
    if (h.size === 0) this.data.delete(key);
  }

  hsetField(key: string, field: string, value: string): void {
    let h = this.hash(key);
    if (!h) {
      h = new Map();
      this.data.set(key, { value: { kind: "hash", fields: h }, expiresAt: Number.POSITIVE_INFINITY });
    }
    h.set(field, value);
  }

  private handOver(
    k: string,
    ch: string,
    f: string,
    q: string,
    qt: string,
    qlease: number,
    nxt: string,
    nlease: number,
    keepMs: number,
    waiting: boolean,
    prev: string,
  ): [number, number, number?, number?] {
    const now = this.nowMs();
    const head = this.liveHead(q, qt, now);
    if (head !== undefined && head !== nxt && !(nxt !== "" && this.keepsTurn(qt, head, now, keepMs))) {
      this.dropEntry(q, qt, head);
      const token = this.nextToken(f);
      const h = new Map([
        [head, "1"],
        ["~handed", head],
      ]);
      if (waiting) h.set("~waiters", "1");
      this.data.set(k, { value: { kind: "hash", fields: h }, expiresAt: this.now() + qlease });
      if (nxt !== "") this.joinQueue(q, qt, nxt, now, qlease);
      const instance = /^(.*):[^:]*$/.exec(head)?.[1] ?? head;
      this.published.push([handoffChannel(ch, instance), `c:${head} ${token} ${qlease}`, instance]);
      this.handoffs.queued++;
      return [3, token];
    }
    if (nxt !== "") {
      let waited = -1;
      let others = 0;
      if (head !== undefined) {
        this.dropEntry(q, qt, nxt);
        waited = this.firstOtherWaited(q, qt, now);
        others = this.list(q)?.length ?? 0;
      }
      const token = this.keptToken(f, prev);
      const h = new Map([
        [nxt, "1"],
        ["~handed", nxt],
      ]);
      if (waiting) h.set("~waiters", "1");
      this.data.set(k, { value: { kind: "hash", fields: h }, expiresAt: this.now() + nlease });
      this.handoffs.next++;
      return [4, token, waited, others];
    }
    if (waiting) this.published.push([ch, "1"]);
    return [2, 0];
  }

  pttl(key: string): number {
    const e = this.get(key);
    if (!e) return -2;
    return e.expiresAt === Number.POSITIVE_INFINITY ? -1 : Math.max(0, Math.round(e.expiresAt - this.now()));
  }

  pexpire(key: string, ms: number): void {
    const e = this.get(key);
    if (e) e.expiresAt = this.now() + ms;
  }

  private raiseTtl(key: string, lease: number): void {
    if (this.pttl(key) < lease) this.pexpire(key, lease);
  }

  /** fence key → the highest token ever issued, kept across DEL and restarts: tokens must never go back. */
  readonly issued = new Map<string, number>();
  /** Set when a token was issued at or below one issued before for the same fence (I9). */
  tokenWentBack: string | null = null;

  /** kept_token: the releasing hold's token + 1 (the fence holds it), or nextToken when unknown or gone. */
  private keptToken(fence: string, prev: string): number {
    const current = this.str(fence);
    if (prev === "" || current === undefined) return this.nextToken(fence);
    return this.issue(fence, Math.max(Number(prev), Number(current)) + 1);
  }

  nextToken(fence: string): number {
    const last = Number(this.str(fence) ?? "0");
    return this.issue(fence, Math.max(last + 1, this.timeUs()));
  }

  private issue(fence: string, token: number): number {
    const before = this.issued.get(fence) ?? 0;
    if (token <= before) this.tokenWentBack ??= `${fence} issued ${token} after ${before}`;
    this.issued.set(fence, token);
    this.data.set(fence, {
      value: { kind: "string", value: String(token) },
      expiresAt: this.now() + FENCE_RETENTION_MS,
    });
    return token;
  }

  /** acquire.ts: [1, count, token] | [0, pttl, fence]. */
  acquire(
    key: string,
    fence: string,
    owner: string,
    lease: number,
    more: boolean,
    queue: QueueArgs = NO_QUEUE,
  ): [number, number, number] {
    const { q, qt, join, qlease } = queue;
    let h = this.hash(key);
    if (!h) {
      const now = this.nowMs();
      const head = this.liveHead(q, qt, now);
      if (head !== undefined && head !== owner) {
        const last = this.fenceOf(fence);
        if (join) this.joinQueue(q, qt, owner, now, qlease);
        return [0, Math.max(1, Number(this.hash(qt)!.get(head)) - now), last];
      }
      const token = this.nextToken(fence);
      if (head !== undefined) this.dropEntry(q, qt, owner);
      h = new Map([[owner, "1"]]);
      if (more) h.set("~waiters", "1");
      this.data.set(key, { value: { kind: "hash", fields: h }, expiresAt: this.now() + lease });
      return [1, 1, token];
    }
    if (h.has(owner)) {
      let token = Number(this.str(fence) ?? "0");
      if (token === 0) token = this.nextToken(fence);
      else this.pexpire(fence, FENCE_RETENTION_MS);
      if (h.get("~handed") === owner) {
        h.delete("~handed");
        if (join) {
          if (more) h.set("~waiters", "1");
          this.pexpire(key, lease);
          return [1, 1, token];
        }
      }
      const count = Number(h.get(owner)) + 1;
      h.set(owner, String(count));
      this.raiseTtl(key, lease);
      return [1, count, token];
    }
    const last = this.fenceOf(fence);
    h.set("~waiters", "1");
    if (join) this.joinQueue(q, qt, owner, this.nowMs(), qlease);
    return [0, this.pttl(key), last];
  }

  /** fence_of: the last token issued (0 none), as a refusal reports it. */
  private fenceOf(fence: string): number {
    return Number(this.str(fence) ?? "0");
  }

  /** Messages published with a body (Redlock's release names its owner): [channel, message]. */
  readonly messages: [string, string][] = [];

  /** redis/scripts/redlock-acquire.ts: acquire without the fence or a count. [1, 1] | [0, pttl, holder]. */
  redlockAcquire(key: string, owner: string, lease: number, more: boolean): [number, number, string?] {
    let h = this.hash(key);
    if (!h) {
      h = new Map([[owner, "1"]]);
      if (more) h.set("~waiters", "1");
      this.data.set(key, { value: { kind: "hash", fields: h }, expiresAt: this.now() + lease });
      return [1, 1];
    }
    if (h.has(owner)) {
      this.raiseTtl(key, lease);
      return [1, 1];
    }
    h.set("~waiters", "1");
    const holder = [...h.keys()].find((f) => f !== "~waiters") ?? "";
    return [0, this.pttl(key), holder];
  }

  /**
   * redis/scripts/redlock-release.ts: deletes the owner's key, no count; the message names the owner, unless
   * `announce` is false (an undo that frees no lock).
   */
  redlockRelease(
    key: string,
    channel: string,
    owner: string,
    _lease: number,
    announce = true,
  ): [number, number] {
    const h = this.hash(key);
    if (!h?.has(owner)) return [0, 0];
    const waiting = h.has("~waiters");
    this.data.delete(key);
    if (waiting && announce) this.messages.push([channel, owner]);
    return [2, 0];
  }

  /** release.ts: [0, 0] not-owner (incl. a hold whose token the fence no longer holds) | [1, left] | [2|3|4, …]. */
  release(
    key: string,
    channel: string,
    fence: string,
    owner: string,
    lease: number,
    token: string,
    handoff: HandoffArgs = NO_HANDOFF,
  ): [number, number, number?, number?] {
    const h = this.hash(key);
    if (!h?.has(owner)) return [0, 0];
    if (token !== "") {
      const current = this.str(fence);
      if (current !== undefined && current !== token) return [0, 0];
    }
    const left = Number(h.get(owner)) - 1;
    if (left > 0) {
      h.set(owner, String(left));
      this.raiseTtl(key, lease);
      return [1, left];
    }
    const waiting = h.has("~waiters");
    this.data.delete(key);
    const { q, qt, qlease, next, nextLease, keepMs } = handoff;
    return this.handOver(key, channel, fence, q, qt, qlease, next, nextLease, keepMs, waiting, token);
  }

  /** leave.ts: [0, 0] left | [4, token] passed on to the successor | [3, token] / [2, 0] as release. */
  leave(
    key: string,
    channel: string,
    fence: string,
    owner: string,
    successor: string,
    successorLease: number,
    queue: Omit<QueueArgs, "join">,
  ): [number, number, number?, number?] {
    const { q, qt, qlease } = queue;
    const h = this.hash(key);
    if (h?.get("~handed") === owner) {
      this.handoffs.toLeaver++;
      if (successor !== "") {
        this.dropEntry(q, qt, successor);
        const token = this.nextToken(fence);
        h.delete(owner);
        h.set(successor, "1");
        h.set("~handed", successor);
        this.pexpire(key, successorLease);
        return [4, token];
      }
      const waiting = h.has("~waiters");
      this.data.delete(key);
      this.dropEntry(q, qt, owner);
      return this.handOver(key, channel, fence, q, qt, qlease, "", 0, 0, waiting, "");
    }
    const items = this.list(q);
    const pos = items?.indexOf(owner) ?? -1;
    if (pos !== -1 && successor !== "" && !items!.includes(successor) && !h?.has(successor)) {
      items![pos] = successor;
      const joined = this.hash(qt)?.get(since(owner));
      this.hdel(qt, owner);
      this.hdel(qt, since(owner));
      this.hsetField(qt, successor, String(this.nowMs() + qlease));
      if (joined !== undefined) this.hsetField(qt, since(successor), joined);
    } else this.dropEntry(q, qt, owner);
    return [0, 0];
  }

  /** renew.ts: 1 | 0. */
  renew(key: string, owner: string, lease: number): number {
    const h = this.hash(key);
    if (!h?.has(owner)) return 0;
    this.raiseTtl(key, lease);
    return 1;
  }

  /** fenced-write.ts: [1, value] | [0, fence] STALE | [-1, value] INSUFFICIENT. */
  fencedWrite(
    key: string,
    token: number,
    delta: number,
    valueField = "qty",
    fenceField = "fence",
  ): [number, number] {
    const h = this.hash(key);
    const fence = Number(h?.get(fenceField) ?? "0");
    if (token < fence) return [0, fence];
    const value = Number(h?.get(valueField) ?? "0");
    if (delta < 0 && value + delta < 0) return [-1, value];
    const fields = h ?? new Map<string, string>();
    if (!h) this.data.set(key, { value: { kind: "hash", fields }, expiresAt: Number.POSITIVE_INFINITY });
    if (token > fence) fields.set(fenceField, String(token));
    fields.set(valueField, String(value + delta));
    return [1, value + delta];
  }

  /** fenced-read.ts: [state, ...values]. */
  fencedRead(
    lock: string,
    fenceKey: string,
    key: string,
    owner: string,
    fenceField: string,
    read: string[],
  ): [number, ...(string | null)[]] {
    let state = 0;
    if (this.hash(lock)?.has(owner)) {
      const token = Number(this.str(fenceKey) ?? "0");
      const h = this.hash(key);
      const fence = Number(h?.get(fenceField) ?? "0");
      if (token < fence) state = -1;
      else {
        state = 1;
        if (token > fence) {
          const fields = h ?? new Map<string, string>();
          if (!h)
            this.data.set(key, { value: { kind: "hash", fields }, expiresAt: Number.POSITIVE_INFINITY });
          fields.set(fenceField, String(token));
        }
      }
    }
    // The script touches the guarded hash here only through HGET of each field read (none: no WRONGTYPE).
    const h = read.length > 0 ? this.hash(key) : undefined;
    return [state, ...read.map((f) => h?.get(f) ?? null)];
  }

  /** The queue's entries still alive (what live_head would skip to), without changing anything. */
  liveEntries(q: string, qt: string): string[] {
    const now = this.nowMs();
    return (this.list(q) ?? []).filter((o) => Number(this.hash(qt)?.get(o) ?? "0") >= now);
  }

  /** Test helpers. */
  hset(key: string, field: string, value: string): void {
    let h = this.hash(key);
    if (!h) {
      h = new Map();
      this.data.set(key, { value: { kind: "hash", fields: h }, expiresAt: Number.POSITIVE_INFINITY });
    }
    h.set(field, value);
  }
  hgetall(key: string): Record<string, string> {
    return Object.fromEntries(this.hash(key) ?? []);
  }
  owners(key: string): string[] {
    return [...(this.hash(key)?.keys() ?? [])].filter((f) => f !== "~waiters" && f !== "~handed");
  }
  getString(key: string): string | null {
    return this.str(key) ?? null;
  }
  keys(): string[] {
    return [...this.data.keys()].filter((k) => this.get(k) !== undefined);
  }
  /** SET key value (no TTL): corrupts a key's type, as a foreign writer could. */
  setString(key: string, value: string): void {
    this.data.set(key, { value: { kind: "string", value }, expiresAt: Number.POSITIVE_INFINITY });
  }
  /** PEXPIRE key ms (ms > 0): 1 when the key exists. */
  pexpireKey(key: string, ms: number): number {
    if (!this.get(key)) return 0;
    this.pexpire(key, ms);
    return 1;
  }
  del(key: string): number {
    return this.get(key) && this.data.delete(key) ? 1 : 0;
  }
  /** TYPE, PTTL and the value of a key, as the differential test reads them from Redis. */
  snapshot(key: string): { type: "none" | "hash" | "string" | "list"; pttl: number; value: unknown } {
    const e = this.get(key);
    if (!e) return { type: "none", pttl: -2, value: null };
    const value =
      e.value.kind === "hash"
        ? Object.fromEntries(e.value.fields)
        : e.value.kind === "list"
          ? [...e.value.items]
          : e.value.value;
    return { type: e.value.kind, pttl: this.pttl(key), value };
  }
  /** Absolute expiry (virtual ms) of every live key that has one, and of every queue entry (queue.ts). */
  expiries(): number[] {
    const keys = this.keys();
    const entries = keys
      .filter((k) => k.includes("queue-leases:"))
      .flatMap((k) => {
        const e = this.data.get(k)!.value;
        return e.kind === "hash" ? [...e.fields.values()].map(Number) : [];
      });
    return keys
      .map((k) => this.data.get(k)!.expiresAt)
      .filter((t) => t !== Number.POSITIVE_INFINITY)
      .concat(entries);
  }
}
