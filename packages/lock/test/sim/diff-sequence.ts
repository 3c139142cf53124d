import type { ChainableCommander, Redis } from "ioredis";
import { sleep } from "../helpers.js";
import { ModelRedis } from "./model.js";
import { Rng } from "./rng.js";

/**
 * What the differential tests (model-vs-redis, shared-model-vs-redis) share: one sequence of operations run
 * on redis-server and on the model at the same instant, and the pairing of their tokens.
 *
 * Time: each operation runs in a MULTI after a TIME, and the model runs it at that TIME (ms for expiry, µs
 * for tokens). The script's own TIME is a few µs later, so tokens differ in value: they are compared through
 * a map model token ↔ Redis token that must be one-to-one and order-preserving, and every fresh token must
 * exceed all earlier ones of its resource. An operation is not sent while something expires within a few ms
 * of Redis's now (the two clocks could disagree on it); a sequence where that still happened (a stall
 * between TIME and the script) stops there and is counted.
 */
export const SEED = Number(process.env.DIFF_SEED ?? 1);
/** PTTLs (and lease ends) of the two may differ by this much (the TIME→script gap, raises decided a ms apart). */
export const TTL_SLACK = 3;
/** No operation is sent while a key expires within this window around Redis's now. */
export const GUARD_BEFORE = 3;
const GUARD_AFTER = 12;

export type Reply = { ok: true; value: unknown } | { ok: false; err: string; value?: undefined };
export const isWrongType = (msg: string) => msg.includes("WRONGTYPE");

export class DiffSequence {
  readonly rng: Rng;
  readonly model: ModelRedis;
  nowMs = 0;
  nowUs = 0;
  /** Redis's ms at the last reply, and the local clock then: an estimate of Redis's now between calls. */
  private lastServerMs = 0;
  private lastLocal = 0;
  /** Per resource: model token → Redis token (Redis's TIME moves on inside a script, the model's does not,
   * so tokens of two locks in one batch relate differently; within one resource their order must agree). */
  readonly tokens = [new Map<number, number>(), new Map<number, number>()];
  readonly tokensOf: number[][] = [[], []];
  readonly lastRedisToken: number[] = [0, 0];
  readonly log: string[] = [];
  stopped = false;
  private expiriesBeforeSnapshot: number[] = [];

  constructor(
    protected readonly redis: Redis,
    readonly n: number,
  ) {
    this.rng = new Rng(SEED * 100_003 + n);
    this.model = new ModelRedis(
      () => this.nowMs,
      () => this.nowUs,
    );
  }

  /** Every moment (Redis ms) at which something the scripts look at ends: key TTLs, and more in subclasses. */
  expiries(): number[] {
    return this.model.expiries();
  }

  fail(msg: string): never {
    throw new Error(`sequence ${this.n} (DIFF_SEED=${SEED}): ${msg}\n${this.log.slice(-15).join("\n")}`);
  }

  setTime(s: string, us: string): void {
    this.nowUs = Number(s) * 1_000_000 + Number(us);
    this.nowMs = Math.floor(this.nowUs / 1000);
    this.lastServerMs = this.nowMs;
    this.lastLocal = performance.now();
  }

  private near(ms: number, before: number, after: number): number | undefined {
    return this.expiries().find((e) => e >= ms - before && e <= ms + after);
  }

  /**
   * Whether something (noted before the last snapshot, or still live in the model) expires within GUARD_BEFORE
   * of the snapshot's now. Then a key may be gone on one side only: Redis checks expiry at the script's start
   * (its time frozen for the script), the model at the script's TIME, which can be the next ms.
   */
  expiringAtSnapshot(): boolean {
    return [...this.expiriesBeforeSnapshot, ...this.expiries()].some(
      (x) => Math.abs(x - this.nowMs) <= GUARD_BEFORE,
    );
  }

  /** Waits until nothing expires close to Redis's now, so both sides agree on what has expired. */
  private async clearOfExpiry(): Promise<void> {
    for (;;) {
      const est = this.lastServerMs + (performance.now() - this.lastLocal);
      const e = this.near(Math.floor(est), GUARD_BEFORE, GUARD_AFTER);
      if (e === undefined) return;
      await sleep(Math.max(1, e + GUARD_BEFORE + 1 - est));
    }
  }

  /** Runs `real` (queued after a TIME in one MULTI) and `model` at that TIME; returns both replies. */
  async op(
    label: string,
    real: (m: ChainableCommander) => void,
    model: () => unknown,
  ): Promise<[Reply, Reply] | undefined> {
    await this.clearOfExpiry();
    const before = this.expiries();
    const m = this.redis.multi().time();
    real(m);
    m.time();
    const out = (await m.exec())!;
    const [, time] = out[0]! as [unknown, [string, string]];
    const [, after] = out[out.length - 1]! as [unknown, [string, string]];
    this.setTime(time[0], time[1]);
    const stalledUs = Number(after[0]) * 1_000_000 + Number(after[1]) - this.nowUs;
    if (stalledUs > 1000 || before.some((e) => Math.abs(e - this.nowMs) <= GUARD_BEFORE)) {
      // Redis was descheduled inside the MULTI (a loaded machine), so the time its script saw is not known
      // to the ms; or it answered later than estimated, so which keys it saw expired is not knowable.
      this.stopped = true;
      this.log.push(`${this.nowMs} ${label}: stopped (Redis stalled ${stalledUs} µs in the MULTI)`);
      return undefined;
    }
    const [err, value] = out[1]!;
    const r: Reply = err ? { ok: false, err: String((err as Error).message) } : { ok: true, value };
    let mr: Reply;
    try {
      mr = { ok: true, value: model() };
    } catch (e) {
      mr = { ok: false, err: String((e as Error).message) };
    }
    this.log.push(`${this.nowMs} ${label} → redis ${JSON.stringify(r)} model ${JSON.stringify(mr)}`);
    return [r, mr];
  }

  /** Both replies errors of the same kind, or both values (compared by the caller). */
  bothOk(label: string, r: Reply, m: Reply): boolean {
    if (r.ok !== m.ok) this.fail(`${label}: redis ${JSON.stringify(r)} but model ${JSON.stringify(m)}`);
    if (!r.ok && !m.ok && isWrongType(r.err) !== isWrongType(m.err))
      this.fail(`${label}: redis error ${r.err} but model error ${m.err}`);
    return r.ok;
  }

  /** Records a token pair (one-to-one, same order as every other pair) and checks Redis's tokens increase. */
  token(label: string, i: number, m: number, r: number, fresh: boolean): void {
    const tokens = this.tokens[i]!;
    const known = tokens.get(m);
    if (known !== undefined && known !== r)
      this.fail(`${label}: model token ${m} was Redis token ${known}, now ${r}`);
    if (known === undefined) {
      for (const [m2, r2] of tokens) {
        if (Math.sign(m - m2) !== Math.sign(r - r2))
          this.fail(`${label}: token order differs: model ${m} vs ${m2}, Redis ${r} vs ${r2}`);
      }
      tokens.set(m, r);
      this.tokensOf[i]!.push(m);
    }
    const last = this.lastRedisToken[i]!;
    if (fresh ? r <= last : r < last) this.fail(`${label}: Redis token ${r} after ${last} (not increasing)`);
    this.lastRedisToken[i] = Math.max(last, r);
  }

  translate(i: number, v: string): string {
    const t = this.tokens[i]!.get(Number(v));
    return t === undefined ? v : String(t);
  }

  /**
   * TYPE, PTTL and value of every key, read in one script (one instant; read again if Redis was descheduled
   * inside it), with Redis's TIME then set as the model's now. Undefined when it kept stalling.
   */
  async snapshot(keys: string[]): Promise<{ type: string; pttl: number; value: unknown }[] | undefined> {
    // As for an operation: not while something expires close to Redis's now, and what could expire is noted
    // first, since the model forgets a key (and its expiry) once its now passes it.
    await this.clearOfExpiry();
    this.expiriesBeforeSnapshot = this.expiries();
    for (let attempt = 0; attempt < 5; attempt++) {
      const raw = (await this.redis.eval(SNAPSHOT, keys.length, ...keys)) as unknown[];
      const stalledUs =
        (Number(raw.at(-2)) - Number(raw[0])) * 1_000_000 + Number(raw.at(-1)) - Number(raw[1]);
      if (stalledUs > 1000) continue;
      this.setTime(raw[0] as string, raw[1] as string);
      return keys.map((_, i) => {
        const type = raw[2 + 3 * i] as string;
        let value = raw[4 + 3 * i];
        if (type === "hash") {
          const flat = value as string[];
          const h: Record<string, string> = {};
          for (let j = 0; j < flat.length; j += 2) h[flat[j]!] = flat[j + 1]!;
          value = h;
        }
        return { type, pttl: raw[3 + 3 * i] as number, value };
      });
    }
    return undefined;
  }
}

export function sortKeys(v: unknown): unknown {
  if (v && typeof v === "object" && !Array.isArray(v))
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1)),
    );
  return v;
}

const SNAPSHOT = `
local t = redis.call('time')
local out = {t[1], t[2]}
for i = 1, #KEYS do
  local ty = redis.call('type', KEYS[i]).ok
  local v = false
  if ty == 'hash' then v = redis.call('hgetall', KEYS[i]) elseif ty == 'string' then v = redis.call('get', KEYS[i])
  elseif ty == 'list' then v = redis.call('lrange', KEYS[i], 0, -1) end
  out[#out + 1] = ty
  out[#out + 1] = redis.call('pttl', KEYS[i])
  out[#out + 1] = v
end
local t2 = redis.call('time')
out[#out + 1] = t2[1]
out[#out + 1] = t2[2]
return out
`;
