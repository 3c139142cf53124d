import type { ChainableCommander, Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { scripts, withScripts } from "../../src/redis/scripts/index.js";
import { redlockAcquire } from "../../src/redis/scripts/redlock-acquire.js";
import { redlockRelease } from "../../src/redis/scripts/redlock-release.js";
import { connect, sleep } from "../helpers.js";
import { DiffSequence, GUARD_BEFORE, isWrongType, type Reply, sortKeys, TTL_SLACK } from "./diff-sequence.js";
import type { HandoffArgs, QueueArgs } from "./model.js";

/**
 * The simulation's Redis (model.ts) against a real redis-server running the library's own scripts: random
 * sequences of acquire / re-entry / release / renew (single and batched forms) / fencedWrite / fencedRead /
 * Redlock's node acquire and release, the waiter queue and the handoff (acquire joining and adopting, release
 * naming a next waiter, leave),
 * with small leases and real waits so keys expire, plus PEXPIRE, DEL and keys of the wrong type. After every
 * operation the replies and the whole state (TYPE, value and PTTL of every key) must be identical. How time
 * and tokens are compared: diff-sequence.ts.
 */
const SEQUENCES = Number(process.env.DIFF_SEQUENCES ?? 300);
const OPS = Number(process.env.DIFF_OPS ?? 40);
const OWNERS = ["o1", "o2", "o3"];
const LEASES = [15, 40, 120, 60_000];
/** Queue entry leases: some run out within a sequence. */
const QUEUE_LEASES = [20, 80, 60_000];
const READ_FIELDS = ["qty", "fence", "other"];
const SENTINEL = 9_000_000_000_000_000;

let redis: Redis;
let sub: Redis;
/** Channel → the bodies published on it, in order of arrival. */
const messages = new Map<string, string[]>();

beforeAll(async () => {
  redis = connect();
  sub = connect();
  withScripts(redis);
  for (const s of scripts) await redis.script("LOAD", s.lua);
  sub.on("pmessage", (_p: string, channel: string, body: string) =>
    messages.set(channel, [...(messages.get(channel) ?? []), body]),
  );
  await sub.psubscribe(`mvr:${process.pid}:*`);
});
afterAll(() => {
  redis.disconnect();
  sub.disconnect();
});

interface Keys {
  lock: string;
  fence: string;
  channel: string;
  stock: string;
  queue: string;
  queueLeases: string;
}
/** Keys per resource in allKeys() order. */
const KEYS_PER_RESOURCE = 5;

/** Flat replies of the batched forms: entries of an errored lock carry a message; compare by kind. */
function normBatch(flat: unknown[], width: number): unknown[] {
  const out: unknown[] = [];
  for (let i = 0; i < flat.length; i += width) {
    const e = flat.slice(i, i + width);
    if (e[0] === -1) out.push(["error", isWrongType(String(e[1])) ? "WRONGTYPE" : String(e[1])]);
    else out.push(e);
  }
  return out;
}

class Sequence extends DiffSequence {
  readonly res: Keys[];
  private published = 0;

  constructor(n: number) {
    super(redis, n);
    const pfx = `mvr:${process.pid}:${n}:`;
    this.res = ["a", "b"].map((r) => ({
      lock: `${pfx}lock:{${r}}`,
      fence: `${pfx}fence:{${r}}`,
      channel: `${pfx}ch:{${r}}`,
      stock: `${pfx}stock:{${r}}`,
      queue: `${pfx}queue:{${r}}`,
      queueLeases: `${pfx}queue-leases:{${r}}`,
    }));
  }

  allKeys(): string[] {
    return this.res.flatMap((k) => [k.lock, k.fence, k.stock, k.queue, k.queueLeases]);
  }

  /** TYPE, value and PTTL of every key, read in one script (one instant), against the model at that TIME. */
  async compareState(label: string): Promise<void> {
    const keys = this.allKeys();
    const state = await this.snapshot(keys);
    if (!state) return;
    keys.forEach((key, i) => {
      const res = Math.floor(i / KEYS_PER_RESOURCE);
      const { type, pttl, value } = state[i]!;
      const m = this.model.snapshot(key);
      // Expiring right now: either side may be right; the next operation waits past it.
      if (m.pttl >= 0 && m.pttl <= GUARD_BEFORE) return;
      if (this.expiringAtSnapshot() && (type === "none") !== (m.type === "none")) return;
      let mv: unknown = m.value;
      if (m.type === "string")
        mv = key.includes(":fence:") ? this.translate(res, m.value as string) : m.value;
      if (m.type === "hash") {
        const h = { ...(m.value as Record<string, string>) };
        if (h.fence !== undefined && key.includes(":stock:")) h.fence = this.translate(res, h.fence);
        mv = h;
      }
      const entryTimes = key.includes(":queue-leases:");
      let rv: unknown = value;
      // A queue entry's lease end is Redis's ms at the script plus the lease: the model's TIME is a few µs earlier.
      if (entryTimes && type === "hash" && m.type === "hash") {
        const [a, b] = [rv as Record<string, string>, mv as Record<string, string>];
        const same =
          Object.keys(a).sort().join() === Object.keys(b).sort().join() &&
          Object.keys(a).every((f) => Math.abs(Number(a[f]) - Number(b[f])) <= TTL_SLACK);
        if (same) rv = mv;
      }
      if (type !== m.type || JSON.stringify(sortKeys(rv)) !== JSON.stringify(sortKeys(mv)))
        this.fail(
          `${label}: ${key} is ${type} ${JSON.stringify(rv)} in Redis, ${m.type} ${JSON.stringify(mv)} in the model`,
        );
      const ttlOk = pttl < 0 || m.pttl < 0 ? pttl === m.pttl : Math.abs(pttl - m.pttl) <= TTL_SLACK;
      if (!ttlOk) this.fail(`${label}: ${key} PTTL ${pttl} in Redis, ${m.pttl} in the model`);
    });
  }

  /** Every message the model published reached the subscriber, with the same body, and no other. */
  async comparePublished(): Promise<void> {
    const want = new Map<string, string[]>();
    for (const [ch, body] of [...this.model.published, ...this.model.messages])
      want.set(ch, [...(want.get(ch) ?? []), this.handoffInRedis(ch, body)]);
    this.published = this.model.published.length + this.model.messages.length;
    const show = (m: Map<string, string[]>) =>
      this.res.map((k) => `${k.channel}=${JSON.stringify([...(m.get(k.channel) ?? [])].sort())}`).join(" ");
    for (let i = 0; i < 50 && show(messages) !== show(want); i++) await sleep(5);
    if (show(messages) !== show(want)) this.fail(`published: Redis ${show(messages)}, model ${show(want)}`);
  }

  /** A handoff's message names the model's token: the one Redis issued in its place is expected. */
  private handoffInRedis(channel: string, body: string): string {
    const m = /^(c:\S+) (\d+) (\d+)$/.exec(body);
    const i = this.res.findIndex((k) => k.channel === channel);
    if (!m || i < 0) return body;
    return `${m[1]} ${this.translate(i, m[2]!)} ${m[3]}`;
  }

  get publishedCount(): number {
    return this.published;
  }
}

type Cmd = ChainableCommander & Record<string, (...args: unknown[]) => ChainableCommander>;
const cmd = (m: ChainableCommander) => m as Cmd;

interface Stats {
  ops: number;
  stopped: number;
  granted: number;
  adopted: number;
  handed: number;
  grantedNext: number;
  reentered: number;
  refused: number;
  released: number;
  notOwner: number;
  stale: number;
  insufficient: number;
  errors: number;
  published: number;
}

async function runSequence(n: number, stats: Stats): Promise<void> {
  const s = new Sequence(n);
  const { rng, model } = s;
  const pickRes = () => rng.int(0, 1);
  const lease = () => rng.pick(LEASES);
  const owner = () => rng.pick(OWNERS);
  const joins = () => (rng.chance(0.5) ? "1" : "0");
  const qlease = () => rng.pick(QUEUE_LEASES);
  const queueArgs = (k: Keys, join: string, ql: number): QueueArgs => ({
    q: k.queue,
    qt: k.queueLeases,
    join: join === "1",
    qlease: ql,
  });
  /** What a release may hand over to: nobody, or an owner (sometimes one already holding or queued). */
  const handoff = (k: Keys): HandoffArgs => {
    const next = rng.chance(0.5) ? owner() : "";
    return {
      q: k.queue,
      qt: k.queueLeases,
      qlease: qlease(),
      next,
      nextLease: lease(),
      // Never, by the time the first entry waited (60 s: always within a sequence), or by the streak's count.
      keepMs: next === "" ? 0 : rng.pick([0, 60_000, Number.MAX_SAFE_INTEGER]),
    };
  };
  /**
   * The token a release names: none (""), the fence's current value as each side holds it (the holds of the
   * latest grant), or "1", below every token (a hold from before the key was granted afresh).
   */
  const tokens = async (k: Keys): Promise<{ mode: string; redis: string; model: string }> => {
    const mode = rng.pick(["none", "current", "stale"] as const);
    if (mode === "none") return { mode, redis: "", model: "" };
    if (mode === "stale") return { mode, redis: "1", model: "1" };
    const read = async (get: () => Promise<string | null> | string | null) => {
      try {
        return (await get()) ?? "";
      } catch {
        return ""; // a fence key of the wrong type: the script's GET raises on both sides anyway
      }
    };
    return {
      mode,
      redis: await read(() => redis.get(k.fence)),
      model: await read(() => model.getString(k.fence)),
    };
  };
  /** A token to write with: one this resource was granted (often the latest), 0, or far above any. */
  const pickToken = (i: number): [number, number] => {
    const mine = s.tokensOf[i]!;
    const roll = rng.next();
    if (mine.length > 0 && roll < 0.85) {
      const m = rng.chance(0.6) ? mine[mine.length - 1]! : rng.pick(mine);
      return [m, s.tokens[i]!.get(m)!];
    }
    return roll < 0.95 ? [0, 0] : [SENTINEL, SENTINEL];
  };
  for (const k of s.res) {
    await redis.hset(k.stock, "qty", "3");
    model.hset(k.stock, "qty", "3");
  }
  try {
    for (let step = 0; step < OPS && !s.stopped; step++) {
      stats.ops++;
      const roll = rng.next() * 100;
      const i = pickRes();
      const k = s.res[i]!;
      if (roll < 18) {
        // acquire (a fresh grant, a re-entry, or a refusal), single form
        const [o, l, more, join, ql] = [owner(), lease(), rng.chance(0.3) ? "1" : "0", joins(), qlease()];
        const label = `acquire ${i} ${o} ${l} ${more} join:${join} qlease:${ql}`;
        const got = await s.op(
          label,
          (m) => cmd(m).lockyardAcquire!(k.lock, k.fence, k.queue, k.queueLeases, o, l, more, join, ql),
          () => model.acquire(k.lock, k.fence, o, l, more === "1", queueArgs(k, join, ql)),
        );
        if (!got) break;
        const [r, mr] = got;
        if (s.bothOk(label, r, mr))
          checkAcquire(s, label, i, r.value as number[], mr.value as number[], stats);
        else stats.errors++;
      } else if (roll < 26) {
        // acquireMany: 1–3 locks (maybe the same twice), must answer as the single form one after another
        const items = Array.from({ length: rng.int(1, 3) }, () => ({
          i: pickRes(),
          o: owner(),
          l: lease(),
          more: rng.chance(0.3) ? "1" : "0",
          join: joins(),
          ql: qlease(),
        }));
        const keys = items.flatMap((it) => {
          const r = s.res[it.i]!;
          return [r.lock, r.fence, r.queue, r.queueLeases];
        });
        const args = items.flatMap((it) => [it.o, it.l, it.more, it.join, it.ql]);
        const label = `acquireMany ${JSON.stringify(items)}`;
        const got = await s.op(
          label,
          (m) => cmd(m).lockyardAcquireMany!(keys.length, ...keys, ...args),
          () =>
            items.flatMap((it) => {
              try {
                const r = s.res[it.i]!;
                return model.acquire(
                  r.lock,
                  r.fence,
                  it.o,
                  it.l,
                  it.more === "1",
                  queueArgs(r, it.join, it.ql),
                );
              } catch (e) {
                return [-1, String((e as Error).message), 0];
              }
            }),
        );
        if (!got) break;
        const [r, mr] = got;
        if (!s.bothOk(label, r, mr)) continue;
        const rb = normBatch(r.value as unknown[], 3);
        const mb = normBatch(mr.value as unknown[], 3);
        items.forEach((it, j) => {
          const re = rb[j] as unknown[];
          const me = mb[j] as unknown[];
          if (re[0] === "error" || me[0] === "error") {
            stats.errors++;
            if (JSON.stringify(re) !== JSON.stringify(me))
              s.fail(`${label} #${j}: redis ${JSON.stringify(re)} model ${JSON.stringify(me)}`);
          } else checkAcquire(s, `${label} #${j}`, it.i, re as number[], me as number[], stats);
        });
      } else if (roll < 40) {
        const [o, l] = [owner(), lease()];
        const t = await tokens(k);
        const h = handoff(k);
        const label = `release ${i} ${o} ${l} token:${t.mode} ${JSON.stringify(h)}`;
        const got = await s.op(
          label,
          (m) =>
            cmd(m).lockyardRelease!(
              k.lock,
              k.channel,
              k.fence,
              k.queue,
              k.queueLeases,
              o,
              l,
              "0",
              t.redis,
              h.qlease,
              h.next,
              h.nextLease,
              h.keepMs,
            ),
          () => model.release(k.lock, k.channel, k.fence, o, l, t.model, h),
        );
        if (!got) break;
        checkRelease(s, label, i, got, stats);
      } else if (roll < 46) {
        const picked = Array.from({ length: rng.int(1, 3) }, () => ({
          i: pickRes(),
          o: owner(),
          l: lease(),
        }));
        const items: {
          i: number;
          o: string;
          l: number;
          t: Awaited<ReturnType<typeof tokens>>;
          h: HandoffArgs;
        }[] = [];
        for (const it of picked)
          items.push({ ...it, t: await tokens(s.res[it.i]!), h: handoff(s.res[it.i]!) });
        const keys = items.flatMap((it) => {
          const r = s.res[it.i]!;
          return [r.lock, r.channel, r.fence, r.queue, r.queueLeases];
        });
        const args = [
          "0",
          ...items.flatMap((it) => [
            it.o,
            it.l,
            it.t.redis,
            it.h.qlease,
            it.h.next,
            it.h.nextLease,
            it.h.keepMs,
          ]),
        ];
        const label = `releaseMany ${JSON.stringify(items.map((it) => ({ ...it, t: it.t.mode })))}`;
        const got = await s.op(
          label,
          (m) => cmd(m).lockyardReleaseMany!(keys.length, ...keys, ...args),
          () =>
            items.flatMap((it) => {
              try {
                const r = s.res[it.i]!;
                const [code, value, waited, others] = model.release(
                  r.lock,
                  r.channel,
                  r.fence,
                  it.o,
                  it.l,
                  it.t.model,
                  it.h,
                );
                return [code, value, waited ?? -1, others ?? 0];
              } catch (e) {
                return [-1, String((e as Error).message), -1, 0];
              }
            }),
        );
        if (!got) break;
        const [r, mr] = got;
        if (!s.bothOk(label, r, mr)) continue;
        const rb = normBatch(r.value as unknown[], 4) as unknown[][];
        const mb = normBatch(mr.value as unknown[], 4) as unknown[][];
        items.forEach((it, j) => {
          const [re, me] = [rb[j]!, mb[j]!];
          if (re[0] === "error" || me[0] === "error") {
            stats.errors++;
            if (JSON.stringify(re) !== JSON.stringify(me))
              s.fail(`${label} #${j}: redis ${JSON.stringify(re)} model ${JSON.stringify(me)}`);
          } else compareRelease(s, `${label} #${j}`, it.i, re as number[], me as number[], stats);
        });
      } else if (roll < 52) {
        const [o, l] = [owner(), lease()];
        const label = `renew ${i} ${o} ${l}`;
        const got = await s.op(
          label,
          (m) => cmd(m).lockyardRenew!(k.lock, o, l),
          () => model.renew(k.lock, o, l),
        );
        if (!got) break;
        const [r, mr] = got;
        if (s.bothOk(label, r, mr) && r.value !== mr.value)
          s.fail(`${label}: redis ${JSON.stringify(r.value)} model ${JSON.stringify(mr.value)}`);
      } else if (roll < 56) {
        // renewMany has no per-lock pcall: an error fails the call, after the locks before it were renewed.
        const items = Array.from({ length: rng.int(1, 3) }, () => ({ i: pickRes(), o: owner(), l: lease() }));
        const keys = items.map((it) => s.res[it.i]!.lock);
        const args = items.flatMap((it) => [it.o, it.l]);
        const label = `renewMany ${JSON.stringify(items)}`;
        const got = await s.op(
          label,
          (m) => cmd(m).lockyardRenewMany!(keys.length, ...keys, ...args),
          () => items.map((it) => model.renew(s.res[it.i]!.lock, it.o, it.l)),
        );
        if (!got) break;
        const [r, mr] = got;
        if (s.bothOk(label, r, mr) && JSON.stringify(r.value) !== JSON.stringify(mr.value))
          s.fail(`${label}: redis ${JSON.stringify(r.value)} model ${JSON.stringify(mr.value)}`);
      } else if (roll < 66) {
        const [mt, rt] = pickToken(i);
        const delta = rng.pick([-2, -1, -1, 0, 1, 3]);
        const label = `fencedWrite ${i} token ${mt}/${rt} ${delta}`;
        const got = await s.op(
          label,
          (m) => cmd(m).lockyardFencedWrite!(k.stock, rt, delta, "qty", "fence"),
          () => model.fencedWrite(k.stock, mt, delta, "qty", "fence"),
        );
        if (!got) break;
        const [r, mr] = got;
        if (!s.bothOk(label, r, mr)) {
          stats.errors++;
          continue;
        }
        const rv = r.value as number[];
        const mv = mr.value as number[];
        // STALE answers the stored fence: a token, compared through the map.
        const mFence = rv[0] === 0 ? Number(s.translate(i, String(mv[1]))) : mv[1];
        if (rv[0] !== mv[0] || rv[1] !== mFence)
          s.fail(`${label}: redis ${JSON.stringify(rv)} model ${JSON.stringify(mv)}`);
        if (rv[0] === 0) stats.stale++;
        if (rv[0] === -1) stats.insufficient++;
      } else if (roll < 74) {
        const o = owner();
        const fields = READ_FIELDS.filter(() => rng.chance(0.5));
        const label = `fencedRead ${i} ${o} [${fields}]`;
        const got = await s.op(
          label,
          (m) => cmd(m).lockyardFencedRead!(k.lock, k.fence, k.stock, o, "fence", ...fields),
          () => model.fencedRead(k.lock, k.fence, k.stock, o, "fence", fields),
        );
        if (!got) break;
        const [r, mr] = got;
        if (!s.bothOk(label, r, mr)) {
          stats.errors++;
          continue;
        }
        const mv = (mr.value as unknown[]).map((v, j) =>
          j > 0 && fields[j - 1] === "fence" && typeof v === "string" ? s.translate(i, v) : v,
        );
        if (JSON.stringify(r.value) !== JSON.stringify(mv))
          s.fail(`${label}: redis ${JSON.stringify(r.value)} model ${JSON.stringify(mv)}`);
      } else if (roll < 78) {
        // Redlock's node scripts on the same key: a grant, a refusal, or the owner held once already.
        const [o, l, more] = [owner(), lease(), rng.chance(0.3) ? "1" : "0"];
        const label = `redlockAcquire ${i} ${o} ${l} ${more}`;
        const got = await s.op(
          label,
          (m) => m.eval(redlockAcquire.lua, 1, k.lock, o, l, more),
          () => model.redlockAcquire(k.lock, o, l, more === "1"),
        );
        if (!got) break;
        const [r, mr] = got;
        if (s.bothOk(label, r, mr)) {
          const [rv, mv] = [r.value as number[], mr.value as number[]];
          if (
            rv[0] !== mv[0] ||
            (rv[0] === 1 ? rv[1] !== mv[1] : Math.abs(rv[1]! - mv[1]!) > TTL_SLACK || rv[2] !== mv[2])
          )
            s.fail(`${label}: redis ${JSON.stringify(rv)} model ${JSON.stringify(mv)}`);
          if (rv[0] === 1) stats.granted++;
          else stats.refused++;
        } else stats.errors++;
      } else if (roll < 80) {
        // An undo refused by another owner's quorum publishes nothing ("0").
        const [o, l, announce] = [owner(), lease(), rng.chance(0.3) ? "0" : "1"];
        const label = `redlockRelease ${i} ${o} announce:${announce}`;
        const got = await s.op(
          label,
          (m) => m.eval(redlockRelease.lua, 2, k.lock, k.channel, o, l, announce),
          () => model.redlockRelease(k.lock, k.channel, o, l, announce === "1"),
        );
        if (!got) break;
        checkRelease(s, label, i, got, stats);
      } else if (roll < 83) {
        // A queued waiter gives up: leaves (its successor taking its place), or passes on a lock handed to it.
        const [o, succ, sl, ql] = [owner(), rng.chance(0.5) ? owner() : "", lease(), qlease()];
        const label = `leave ${i} ${o} successor:${succ} ${sl} qlease:${ql}`;
        const got = await s.op(
          label,
          (m) =>
            cmd(m).lockyardLeave!(k.lock, k.channel, k.fence, k.queue, k.queueLeases, o, succ, sl, "0", ql),
          () =>
            model.leave(k.lock, k.channel, k.fence, o, succ, sl, {
              q: k.queue,
              qt: k.queueLeases,
              qlease: ql,
            }),
        );
        if (!got) break;
        checkRelease(s, label, i, got, stats);
      } else if (roll < 85) {
        // Real time passes: short leases run out.
        await sleep(rng.int(1, 25));
        continue;
      } else if (roll < 91) {
        const key = rng.pick([k.lock, k.lock, k.fence, k.stock]);
        const ms = rng.pick([1, 10, 50]);
        const got = await s.op(
          `pexpire ${key} ${ms}`,
          (m) => m.pexpire(key, ms),
          () => model.pexpireKey(key, ms),
        );
        if (!got) break;
        if (JSON.stringify(got[0]) !== JSON.stringify(got[1]))
          s.fail(`pexpire ${key}: ${JSON.stringify(got)}`);
      } else if (roll < 95) {
        const key = rng.pick([k.lock, k.fence, k.stock]);
        const got = await s.op(
          `del ${key}`,
          (m) => m.del(key),
          () => model.del(key),
        );
        if (!got) break;
        if (JSON.stringify(got[0]) !== JSON.stringify(got[1])) s.fail(`del ${key}: ${JSON.stringify(got)}`);
      } else if (roll < 99) {
        const qty = String(rng.int(0, 4));
        const got = await s.op(
          `hset ${k.stock} qty ${qty}`,
          (m) => m.hset(k.stock, "qty", qty),
          () => {
            model.hset(k.stock, "qty", qty);
            return null;
          },
        );
        if (!got) break;
      } else {
        // A key of the wrong type: the scripts must fail alike (and the batched forms per lock).
        const which = rng.int(0, 2);
        const got = await s.op(
          `corrupt ${which} of ${i}`,
          (m) => {
            m.del([k.lock, k.fence, k.stock][which]!);
            if (which === 1) m.hset(k.fence, "x", "1");
            else m.set(which === 0 ? k.lock : k.stock, "x");
          },
          () => {
            if (which === 1) {
              model.del(k.fence);
              model.hset(k.fence, "x", "1");
            } else model.setString(which === 0 ? k.lock : k.stock, "x");
            return null;
          },
        );
        if (!got) break;
      }
      if (!s.stopped) await s.compareState(`after step ${step}`);
    }
    if (s.stopped) stats.stopped++;
    else await s.comparePublished();
    stats.published += s.publishedCount;
  } finally {
    await redis.del(...s.allKeys());
  }
}

function checkAcquire(s: Sequence, label: string, i: number, r: number[], m: number[], stats: Stats): void {
  if (r[0] !== m[0]) s.fail(`${label}: redis ${JSON.stringify(r)} model ${JSON.stringify(m)}`);
  if (r[0] === 1) {
    if (r[1] !== m[1]) s.fail(`${label}: count ${r[1]} in Redis, ${m[1]} in the model`);
    // A count of 1 is a fresh grant, or the adoption of a handoff (its token issued by the release already).
    const adopted = r[1] === 1 && s.tokens[i]!.has(m[2]!);
    s.token(label, i, m[2]!, r[2]!, r[1] === 1 && !adopted);
    if (adopted) stats.adopted++;
    else if (r[1] === 1) stats.granted++;
    else stats.reentered++;
  } else {
    stats.refused++;
    // The last token issued: the same one on both sides (0 none).
    const fence = m[2] === 0 ? 0 : s.tokens[i]!.get(m[2]!);
    if (r[2] !== fence || Math.abs(r[1]! - m[1]!) > TTL_SLACK || r[1]! < 0 !== m[1]! < 0)
      s.fail(`${label}: refused with ${JSON.stringify(r)} in Redis, ${JSON.stringify(m)} in the model`);
  }
}

/** A single release's (or leave's) replies must agree; counted by outcome. */
function checkRelease(s: Sequence, label: string, i: number, [r, mr]: [Reply, Reply], stats: Stats): void {
  if (!s.bothOk(label, r, mr)) {
    stats.errors++;
    return;
  }
  compareRelease(s, label, i, r.value as number[], mr.value as number[], stats);
}

/** Identical, except that a handoff's fresh token ({3|4, token}) is compared through the token map. */
function compareRelease(s: Sequence, label: string, i: number, r: number[], m: number[], stats: Stats): void {
  const handed = r[0] === 3 || r[0] === 4;
  if (r[0] !== m[0] || (!handed && r[1] !== m[1]))
    s.fail(`${label}: redis ${JSON.stringify(r)} model ${JSON.stringify(m)}`);
  if (handed) s.token(label, i, m[1]!, r[1]!, true);
  // A grant to the releasing process's next waiter says whether another process's entry queues (and how long:
  // times differ between the two, so only whether).
  if (r[0] === 4 && (r[2] ?? -1) < 0 !== (m[2] ?? -1) < 0)
    s.fail(`${label}: redis says ${r[2]} ms queued, model ${m[2]}`);
  // And how many entries queue (which the releasing process divides its time slice by).
  if (r[0] === 4 && (r[3] ?? 0) !== (m[3] ?? 0))
    s.fail(`${label}: redis says ${r[3]} entries queue, model ${m[3]}`);
  countRelease(stats, r[0]!);
}

function countRelease(stats: Stats, code: number): void {
  if (code === 0) stats.notOwner++;
  else if (code === 3) stats.handed++;
  else if (code === 4) stats.grantedNext++;
  else stats.released++;
}

describe("the simulation's Redis model agrees with redis-server running the library's scripts", () => {
  it(`${SEQUENCES} random sequences of ${OPS} operations`, async () => {
    const stats: Stats = {
      ops: 0,
      stopped: 0,
      granted: 0,
      adopted: 0,
      handed: 0,
      grantedNext: 0,
      reentered: 0,
      refused: 0,
      released: 0,
      notOwner: 0,
      stale: 0,
      insufficient: 0,
      errors: 0,
      published: 0,
    };
    // A retried run reuses the sequences' channel names: what the last run heard must not count for this one.
    messages.clear();
    const started = performance.now();
    for (let n = 0; n < SEQUENCES; n++) await runSequence(n, stats);
    console.log(
      `model-vs-redis: ${JSON.stringify(stats)} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
    );
    // Each kind of answer was exercised, and few sequences had to stop on a clock stall.
    expect(stats.granted).toBeGreaterThan(SEQUENCES);
    expect(stats.reentered).toBeGreaterThan(SEQUENCES / 10);
    // Adoptions need a handoff still unclaimed when the adopting attempt runs: on a loaded machine more of those
    // claims run out first (24-27 of 300 sequences idle, 14 once in CI under the whole suite's load).
    expect(stats.adopted).toBeGreaterThan(SEQUENCES / 40);
    expect(stats.handed).toBeGreaterThan(SEQUENCES / 20);
    expect(stats.grantedNext).toBeGreaterThan(SEQUENCES / 10);
    expect(stats.refused).toBeGreaterThan(SEQUENCES / 2);
    expect(stats.notOwner).toBeGreaterThan(SEQUENCES / 2);
    expect(stats.stale).toBeGreaterThan(SEQUENCES / 10);
    expect(stats.insufficient).toBeGreaterThan(SEQUENCES / 10);
    expect(stats.errors).toBeGreaterThan(0);
    expect(stats.published).toBeGreaterThan(0);
    expect(stats.stopped).toBeLessThan(SEQUENCES / 5);
  }, 300_000);
});
