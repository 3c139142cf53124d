import type { ChainableCommander, Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scripts, withScripts } from "../../src/redis/scripts/index.js";
import { connect, sleep } from "../helpers.js";
import { DiffSequence, GUARD_BEFORE, sortKeys, TTL_SLACK } from "./diff-sequence.js";
import { holdOf, type SharedMode, SharedModel } from "./shared-model.js";

/**
 * shared-model.ts against redis-server running the library's shared-lock scripts: random sequences of
 * acquire in every mode (fresh, re-entry, a writer re-entering as reader, a reader's upgrade, refusals that
 * mark waiters and writers), release (by mode, with no token, the hold's own, another holder's or a stale
 * one), renew batches, with leases short enough to end within a sequence, plus PEXPIRE, DEL and a key of the
 * wrong type. After every operation the replies and the whole state must match: each holder field's counts
 * exactly, its lease end (Redis time) and the writer mark within a few ms, its token through the token map
 * (diff-sequence.ts), every PTTL within a few ms, and the release messages published. The simulation's
 * `wouldGrant` (its lost wake-up check) must foretell each acquire's answer.
 */
const SEQUENCES = Number(process.env.DIFF_SHARED_SEQUENCES ?? 80);
const OPS = Number(process.env.DIFF_OPS ?? 40);
const OWNERS = ["o1", "o2", "o3", "o4"];
const LEASES = [15, 40, 120, 60_000];
/** How long a refused writer's mark lasts: some run out within a sequence. */
const MARKS = [20, 80, 60_000];

let redis: Redis;
let sub: Redis;
const messages = new Map<string, string[]>();

beforeAll(async () => {
  redis = connect();
  sub = connect();
  withScripts(redis);
  for (const s of scripts) await redis.script("LOAD", s.lua);
  sub.on("pmessage", (_p: string, channel: string, body: string) =>
    messages.set(channel, [...(messages.get(channel) ?? []), body]),
  );
  await sub.psubscribe(`smvr:${process.pid}:*`);
});
afterAll(() => {
  redis.disconnect();
  sub.disconnect();
});

interface Keys {
  lock: string;
  fence: string;
  channel: string;
  /** The semaphore's waiter queue and its entries' leases (shared-acquire.ts KEYS[3], KEYS[4]). */
  q: string;
  qt: string;
}
/** How long a queue entry lives unrefreshed: short, so entries also run out within a sequence. */
const QLEASES = [30, 150, 60_000];
/** Keys per resource in allKeys(): lock, fence, queue, entry leases. */
const PER = 4;

class SharedSequence extends DiffSequence {
  readonly shared = new SharedModel(() => this.model);
  readonly res: Keys[];

  constructor(n: number) {
    super(redis, n);
    const pfx = `smvr:${process.pid}:${n}:`;
    this.res = ["a", "b"].map((r) => ({
      lock: `${pfx}lock:{${r}}`,
      fence: `${pfx}fence:{${r}}`,
      channel: `${pfx}ch:{${r}}`,
      q: `${pfx}q:{${r}}`,
      qt: `${pfx}qt:{${r}}`,
    }));
  }

  allKeys(): string[] {
    return this.res.flatMap((k) => [k.lock, k.fence, k.q, k.qt]);
  }

  /** Key TTLs, and the lease ends and writer marks inside the hashes: the scripts compare them to now. */
  override expiries(): number[] {
    const inside = this.res.flatMap(({ lock, qt }) => {
      const m = this.model.snapshot(lock);
      const entries = this.model.snapshot(qt);
      const ends =
        entries.type === "hash" ? Object.values(entries.value as Record<string, string>).map(Number) : [];
      if (m.type !== "hash") return ends;
      return [
        ...ends,
        ...Object.entries(m.value as Record<string, string>).flatMap(([f, v]) =>
          f === "~writer-waits" ? [Number(v)] : f.startsWith("~") ? [] : [holdOf(v).e],
        ),
      ];
    });
    return [...super.expiries(), ...inside];
  }

  /** The owners with a field in the model's hash (live or not). */
  holders(k: Keys): string[] {
    const m = this.model.snapshot(k.lock);
    return m.type === "hash" ? Object.keys(m.value as object).filter((f) => !f.startsWith("~")) : [];
  }

  /** The token of `owner`'s field on each side ("" without one), as a release would name it. */
  async holdToken(k: Keys, owner: string): Promise<{ redis: string; model: string }> {
    const tokenIn = (v: string | null | undefined) => (v ? String(holdOf(v).t) : "");
    let real: string | null = null;
    let mine: string | undefined;
    try {
      real = await redis.hget(k.lock, owner);
      mine = this.model.hash(k.lock)?.get(owner);
    } catch {
      // A lock key of the wrong type: the script's HGET raises on both sides anyway.
    }
    return { redis: tokenIn(real), model: tokenIn(mine) };
  }

  async compareState(label: string): Promise<void> {
    const keys = this.allKeys();
    const state = await this.snapshot(keys);
    if (!state) return;
    keys.forEach((key, j) => {
      const i = Math.floor(j / PER);
      const role = j % PER;
      const { type, pttl, value } = state[j]!;
      const m = this.model.snapshot(key);
      // Expiring right now: either side may be right; the next operation waits past it.
      if (m.pttl >= 0 && m.pttl <= GUARD_BEFORE) return;
      if (this.expiringAtSnapshot() && (type === "none") !== (m.type === "none")) return;
      const differ = (what: string) =>
        this.fail(
          `${label}: ${key} ${what}: Redis ${type} ${JSON.stringify(value)}, model ${m.type} ${JSON.stringify(m.value)}`,
        );
      if (type !== m.type) differ("type");
      if (type === "string" && this.translate(i, m.value as string) !== value) differ("value");
      if (
        type === "hash" &&
        role === 1 &&
        JSON.stringify(sortKeys(value)) !== JSON.stringify(sortKeys(m.value))
      )
        differ("value");
      if (type === "hash" && role === 0)
        this.compareHash(i, value as Record<string, string>, m.value as Record<string, string>, differ);
      if (type === "list" && JSON.stringify(value) !== JSON.stringify(m.value)) differ("entries");
      if (type === "hash" && role === 3) {
        const [real, mine] = [value as Record<string, string>, m.value as Record<string, string>];
        const same =
          JSON.stringify(Object.keys(sortKeys(real) as object)) ===
            JSON.stringify(Object.keys(sortKeys(mine) as object)) &&
          Object.entries(real).every(([o, v]) => Math.abs(Number(v) - Number(mine[o])) <= TTL_SLACK);
        if (!same) differ("entry leases");
      }
      const ttlOk = pttl < 0 || m.pttl < 0 ? pttl === m.pttl : Math.abs(pttl - m.pttl) <= TTL_SLACK;
      if (!ttlOk) this.fail(`${label}: ${key} PTTL ${pttl} in Redis, ${m.pttl} in the model`);
    });
  }

  /** Same fields; holders' counts exact, lease ends within the slack, tokens through the map. */
  private compareHash(
    i: number,
    real: Record<string, string>,
    mine: Record<string, string>,
    differ: (what: string) => void,
  ): void {
    if (
      JSON.stringify(Object.keys(sortKeys(real) as object)) !==
      JSON.stringify(Object.keys(sortKeys(mine) as object))
    )
      differ("fields");
    for (const [f, v] of Object.entries(real)) {
      const w = mine[f]!;
      if (f === "~writer-waits") {
        if (Math.abs(Number(v) - Number(w)) > TTL_SLACK) differ(f);
      } else if (f === "~writer-by") {
        // "owner|before": the mark it found is a time, like the mark itself.
        const [a, b] = [v.lastIndexOf("|"), w.lastIndexOf("|")];
        const sameOwner = v.slice(0, a) === w.slice(0, b);
        if (!sameOwner || Math.abs(Number(v.slice(a + 1)) - Number(w.slice(b + 1))) > TTL_SLACK) differ(f);
      } else if (f.startsWith("~")) {
        if (v !== w) differ(f);
      } else {
        const [a, b] = [holdOf(v), holdOf(w)];
        const same =
          a.r === b.r &&
          a.w === b.w &&
          Math.abs(a.e - b.e) <= TTL_SLACK &&
          this.translate(i, String(b.t)) === String(a.t);
        if (!same) differ(`holder ${f}`);
      }
    }
  }

  /** Every message the model published reached the subscriber, and no other. */
  async comparePublished(): Promise<number> {
    const want = new Map<string, string[]>();
    for (const [ch, body] of this.model.published) want.set(ch, [...(want.get(ch) ?? []), body]);
    const show = (m: Map<string, string[]>) =>
      this.res.map((k) => `${k.channel}=${JSON.stringify(m.get(k.channel) ?? [])}`).join(" ");
    for (let i = 0; i < 50 && show(messages) !== show(want); i++) await sleep(5);
    if (show(messages) !== show(want)) this.fail(`published: Redis ${show(messages)}, model ${show(want)}`);
    return this.model.published.length;
  }
}

type Cmd = ChainableCommander & Record<string, (...args: unknown[]) => ChainableCommander>;
const cmd = (m: ChainableCommander) => m as Cmd;

const newStats = () => ({
  ops: 0,
  stopped: 0,
  granted: 0,
  reentered: 0,
  upgraded: 0,
  refused: 0,
  refusedByMark: 0,
  released: 0,
  decremented: 0,
  notOwner: 0,
  renewed: 0,
  withdrawn: 0,
  placesPassed: 0,
  permitsHanded: 0,
  handRefused: 0,
  adopted: 0,
  errors: 0,
  published: 0,
});
type Stats = ReturnType<typeof newStats>;

async function runSequence(n: number, stats: Stats): Promise<void> {
  const s = new SharedSequence(n);
  const { rng, model, shared } = s;
  const owner = () => rng.pick(OWNERS);
  const lease = () => rng.pick(LEASES);
  // Resource 0 is mostly a semaphore, resource 1 mostly a read-write lock; now and then a kind meets the other.
  const modeFor = (i: number): SharedMode =>
    rng.chance(0.1)
      ? rng.pick(["permit", "read", "write"])
      : i === 0
        ? "permit"
        : rng.pick(["read", "read", "write"]);
  try {
    for (let step = 0; step < OPS && !s.stopped; step++) {
      stats.ops++;
      const roll = rng.next() * 100;
      const i = rng.int(0, 1);
      const k = s.res[i]!;
      if (roll < 40) {
        const [o, l, more, mode, permits, mark, join, qlease] = [
          owner(),
          lease(),
          rng.chance(0.3) ? "1" : "0",
          modeFor(i),
          rng.int(1, 3),
          rng.pick(MARKS),
          rng.chance(0.5) ? "1" : "0",
          rng.pick(QLEASES),
        ];
        const label = `acquire ${i} ${o} ${mode} lease ${l} more ${more} permits ${permits} mark ${mark} join ${join} qlease ${qlease}`;
        const queue = { q: k.q, qt: k.qt, ch: k.channel, qlease };
        const prior = priorHold(s, k, o);
        // The simulation's lost wake-up check asks wouldGrant; it must foretell the script's answer.
        let foretold: boolean | undefined;
        const got = await s.op(
          label,
          (m) =>
            cmd(m).lockyardSharedAcquire!(
              k.lock,
              k.fence,
              k.q,
              k.qt,
              k.channel,
              o,
              l,
              more,
              mode,
              permits,
              mark,
              join,
              qlease,
              "0",
            ),
          () => {
            foretold = shared.wouldGrant(k.lock, o, mode, permits, { q: k.q, qt: k.qt });
            return shared.acquire(
              k.lock,
              k.fence,
              queue,
              o,
              l,
              more === "1",
              mode,
              permits,
              mark,
              join === "1",
            );
          },
        );
        if (!got) break;
        const [r, mr] = got;
        if (!s.bothOk(label, r, mr)) {
          stats.errors++;
          continue;
        }
        checkAcquire(s, label, i, r.value as number[], mr.value as number[], stats);
        const granted = (r.value as number[])[0] === 1;
        if (foretold !== granted)
          s.fail(`${label}: wouldGrant said ${foretold}, Redis ${JSON.stringify(r.value)}`);
        if (granted && mode === "write" && prior.hold?.w === 0 && prior.hold.e > s.nowMs) stats.upgraded++;
        if (!granted && mode === "read" && !prior.liveWriter && prior.marked) stats.refusedByMark++;
      } else if (roll < 65) {
        // Mostly a holder (a release that finds its hold), sometimes anyone.
        const holding = s.holders(k);
        const o = holding.length > 0 && rng.chance(0.7) ? rng.pick(holding) : owner();
        const mode = rng.pick(["read", "read", "write"] as const);
        const how = rng.pick(["none", "own", "own", "other", "stale"] as const);
        const t =
          how === "none"
            ? { redis: "", model: "" }
            : how === "stale"
              ? { redis: "1", model: "1" }
              : await s.holdToken(k, how === "own" ? o : owner());
        // Half the permit releases name the releasing process's next waiter: an owner holding nothing (the core
        // names only a waiter under a fresh owner name), which may queue already.
        const idle = OWNERS.filter((x) => x !== o && !holding.includes(x));
        const next = mode === "read" && idle.length > 0 && rng.chance(0.5) ? rng.pick(idle) : "";
        const nextLease = lease();
        const qlease = rng.pick(QLEASES);
        const label = `release ${i} ${o} ${mode} token:${how}${next ? ` next:${next}` : ""}`;
        const got = await s.op(
          label,
          (m) =>
            cmd(m).lockyardSharedRelease!(
              k.lock,
              k.channel,
              k.q,
              k.qt,
              k.fence,
              o,
              mode,
              t.redis,
              "0",
              next,
              nextLease,
              qlease,
            ),
          () =>
            shared.release(k.lock, k.channel, k.q, k.qt, k.fence, o, mode, t.model, next, nextLease, qlease),
        );
        if (!got) break;
        const [r, mr] = got;
        if (!s.bothOk(label, r, mr)) {
          stats.errors++;
          continue;
        }
        const [rv, mv] = [r.value as number[], mr.value as number[]];
        // A permit handed on is a fresh grant: its token is compared through the token map.
        const handed = rv[0] === 4 && mv[0] === 4;
        if (handed) s.token(label, i, mv[1]!, rv[1]!, true);
        const comparable = (v: number[]) => (handed ? [v[0], v[2]] : v);
        if (JSON.stringify(comparable(rv)) !== JSON.stringify(comparable(mv)))
          s.fail(`${label}: redis ${JSON.stringify(rv)} model ${JSON.stringify(mv)}`);
        const code = rv[0];
        if (code === 0) stats.notOwner++;
        else if (code === 1) stats.decremented++;
        else stats.released++;
        if (code === 4) stats.permitsHanded++;
        else if (next !== "" && code === 2) stats.handRefused++;
      } else if (roll < 80) {
        const items = Array.from({ length: rng.int(1, 3) }, () => ({
          i: rng.int(0, 1),
          owner: owner(),
          lease: lease(),
        }));
        const keys = items.map((it) => s.res[it.i]!.lock);
        const args = items.flatMap((it) => [it.owner, it.lease]);
        const label = `renewMany ${JSON.stringify(items)}`;
        const got = await s.op(
          label,
          (m) => cmd(m).lockyardSharedRenewMany!(keys.length, ...keys, ...args),
          () =>
            shared.renewMany(
              items.map((it) => ({ key: s.res[it.i]!.lock, owner: it.owner, lease: it.lease })),
            ),
        );
        if (!got) break;
        const [r, mr] = got;
        if (!s.bothOk(label, r, mr)) {
          stats.errors++;
          continue;
        }
        if (JSON.stringify(r.value) !== JSON.stringify(mr.value))
          s.fail(`${label}: redis ${JSON.stringify(r.value)} model ${JSON.stringify(mr.value)}`);
        stats.renewed += (r.value as number[]).filter((v) => v === 1).length;
      } else if (roll < 82) {
        // A writer that gave up takes its mark back: mostly the one that set it last, sometimes anyone.
        const snap = s.model.snapshot(k.lock);
        const by = snap.type === "hash" ? (snap.value as Record<string, string>)["~writer-by"] : undefined;
        const o = by !== undefined && rng.chance(0.7) ? by.slice(0, by.lastIndexOf("|")) : owner();
        const label = `withdraw ${i} ${o}`;
        const got = await s.op(
          label,
          (m) => cmd(m).lockyardSharedWithdraw!(k.lock, k.channel, o, "0"),
          () => shared.withdraw(k.lock, k.channel, o),
        );
        if (!got) break;
        const [r, mr] = got;
        if (s.bothOk(label, r, mr) && JSON.stringify(r.value) !== JSON.stringify(mr.value))
          s.fail(`${label}: redis ${JSON.stringify(r.value)} model ${JSON.stringify(mr.value)}`);
        if (r.value === 1) stats.withdrawn++;
      } else if (roll < 86) {
        // Mostly an owner that queues; half the leaves name a successor (the process's next waiter), which may
        // queue already.
        const queued = s.model.snapshot(k.q);
        const entries = queued.type === "list" ? (queued.value as string[]) : [];
        const o = entries.length > 0 && rng.chance(0.7) ? rng.pick(entries) : owner();
        const succ = rng.chance(0.5) ? owner() : "";
        const ql = rng.pick([50, 2_000]);
        const label = `leave ${i} ${o} successor:${succ} qlease:${ql}`;
        const got = await s.op(
          label,
          (m) => cmd(m).lockyardSharedLeave!(k.q, k.qt, k.channel, o, "0", succ, ql),
          () => shared.leave(k.q, k.qt, k.channel, o, succ, ql),
        );
        if (!got) break;
        const [r, mr] = got;
        if (s.bothOk(label, r, mr) && JSON.stringify(r.value) !== JSON.stringify(mr.value))
          s.fail(`${label}: redis ${JSON.stringify(r.value)} model ${JSON.stringify(mr.value)}`);
        if (r.value === 2) stats.placesPassed++;
      } else if (roll < 88) {
        // Real time passes: short leases and marks run out.
        await sleep(rng.int(1, 30));
        continue;
      } else if (roll < 93) {
        const ms = rng.pick([1, 10, 50]);
        const got = await s.op(
          `pexpire ${k.lock} ${ms}`,
          (m) => m.pexpire(k.lock, ms),
          () => model.pexpireKey(k.lock, ms),
        );
        if (!got) break;
        if (JSON.stringify(got[0]) !== JSON.stringify(got[1]))
          s.fail(`pexpire ${k.lock}: ${JSON.stringify(got)}`);
      } else if (roll < 99) {
        const key = rng.pick([k.lock, k.lock, k.fence]);
        const got = await s.op(
          `del ${key}`,
          (m) => m.del(key),
          () => model.del(key),
        );
        if (!got) break;
        if (JSON.stringify(got[0]) !== JSON.stringify(got[1])) s.fail(`del ${key}: ${JSON.stringify(got)}`);
      } else {
        // A key of the wrong type: every script must fail alike.
        const key = rng.pick([k.lock, k.fence]);
        const got = await s.op(
          `corrupt ${key}`,
          (m) => {
            m.del(key);
            if (key === k.lock) m.set(key, "x");
            else m.hset(key, "x", "1");
          },
          () => {
            model.del(key);
            if (key === k.lock) model.setString(key, "x");
            else model.hset(key, "x", "1");
            return null;
          },
        );
        if (!got) break;
      }
      if (!s.stopped) await s.compareState(`after step ${step}`);
    }
    if (s.stopped) stats.stopped++;
    else stats.published += await s.comparePublished();
  } finally {
    await redis.del(...s.allKeys());
  }
}

/** What the model held before an acquire: the owner's field, whether a writer held, whether a mark stood. */
function priorHold(s: SharedSequence, k: Keys, owner: string) {
  const m = s.model.snapshot(k.lock);
  const fields = m.type === "hash" ? (m.value as Record<string, string>) : {};
  const holds = Object.entries(fields).filter(([f]) => !f.startsWith("~"));
  return {
    hold: fields[owner] === undefined ? undefined : holdOf(fields[owner]),
    liveWriter: holds.some(([, v]) => holdOf(v).w > 0 && holdOf(v).e > s.nowMs),
    marked: fields["~writer-waits"] !== undefined,
  };
}

/** Same answer; a fresh grant's token is a new pair in the map, a re-entry's the pair of its hold. */
function checkAcquire(
  s: SharedSequence,
  label: string,
  i: number,
  r: number[],
  m: number[],
  stats: Stats,
): void {
  const differ = () => s.fail(`${label}: redis ${JSON.stringify(r)} model ${JSON.stringify(m)}`);
  if (r[0] !== m[0]) differ();
  if (r[0] === 0) {
    stats.refused++;
    if (r[2] !== 0 || m[2] !== 0 || Math.abs(r[1]! - m[1]!) > TTL_SLACK) differ();
    return;
  }
  if (r[1] !== m[1]) differ();
  // A model token seen before is the token of a hold this answer re-entered or (a waiting permit acquire finding
  // a permit a release handed it) adopted; a fresh grant's is new.
  const known = s.tokens[i]!.get(m[2]!) !== undefined;
  if (r[1] === 1 && !known) {
    stats.granted++;
    s.token(label, i, m[2]!, r[2]!, true);
    return;
  }
  if (r[1] === 1) stats.adopted++;
  else stats.reentered++;
  if (s.tokens[i]!.get(m[2]!) !== r[2]) differ();
}

describe("the simulation's shared-lock model agrees with redis-server running the shared-lock scripts", () => {
  it(`${SEQUENCES} random sequences of ${OPS} operations`, async () => {
    const stats = newStats();
    // A retried run reuses the sequences' channel names: what the last run heard must not count for this one.
    messages.clear();
    const started = performance.now();
    for (let n = 0; n < SEQUENCES; n++) await runSequence(n, stats);
    console.log(
      `shared-model-vs-redis: ${JSON.stringify(stats)} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    // Each kind of answer was exercised, and few sequences had to stop on a clock stall.
    expect(stats.granted).toBeGreaterThan(SEQUENCES);
    expect(stats.reentered).toBeGreaterThan(SEQUENCES / 5);
    expect(stats.upgraded).toBeGreaterThan(0);
    expect(stats.refused).toBeGreaterThan(SEQUENCES / 2);
    expect(stats.refusedByMark).toBeGreaterThan(0);
    expect(stats.released).toBeGreaterThan(SEQUENCES / 2);
    expect(stats.decremented).toBeGreaterThan(SEQUENCES / 10);
    expect(stats.notOwner).toBeGreaterThan(SEQUENCES / 2);
    expect(stats.renewed).toBeGreaterThan(SEQUENCES / 2);
    expect(stats.withdrawn).toBeGreaterThan(0);
    expect(stats.placesPassed).toBeGreaterThan(0);
    expect(stats.permitsHanded).toBeGreaterThan(0);
    expect(stats.handRefused).toBeGreaterThan(0);
    expect(stats.adopted).toBeGreaterThan(0);
    expect(stats.errors).toBeGreaterThan(0);
    expect(stats.published).toBeGreaterThan(0);
    expect(stats.stopped).toBeLessThan(SEQUENCES / 5);
  }, 300_000);
});
