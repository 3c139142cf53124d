/**
 * The no-two-holders checker.
 *
 * Input: the lock scripts each process sent, as recorded on the wire by fixtures/wire.mjs (send
 * time, settle time, outcome), all on the parent's `performance.now()` time base. Child processes
 * record in their own clock; child.ts maps their times into ours with a bound measured by pings
 * (`errMs`). Every Node process reads the same CLOCK_MONOTONIC, so the offset is constant and only
 * its measurement is uncertain.
 *
 * ## What a hold is: a lease-validity interval
 *
 * A hold of owner O on key K is the span during which O is *entitled* to act as the holder:
 *
 *   start = when the successful acquire's reply arrived (O cannot act before it knows), minus errMs;
 *   end   = the earliest of
 *           - the send time of the release that emptied the lock (O stops acting before it asks),
 *           - the local lease deadline: send time of the acquire, or of the latest renewal that
 *             answered 1, plus the lease (exactly the rule the library uses; measured from the
 *             *send* so it can only be earlier than Redis's own expiry),
 *           - the moment the process was SIGKILLed (a dead process acts no more),
 *         plus errMs.
 *
 * Why not "until Redis forgets the key"? Because a SIGSTOPped (or GC-paused, or stalled) ex-holder
 * is not a holder in Redis's eyes once its lease has expired: Redis hands the lock to the next
 * owner, and both processes may well *run* at the same time. Mutual exclusion on leases can only
 * promise that no two owners hold *valid* leases at once; what protects the data from the paused
 * ex-holder that wakes up and writes anyway is the fencing token (scenario 1 proves that
 * separately). So the checker asserts: lease-validity intervals of different owners never overlap.
 *
 * With a correct lock these intervals are strictly ordered by causality: the next owner learns of
 * its grant only after Redis ran the previous owner's release (sent after that owner's `end`) or
 * after Redis expired the key (no earlier than the previous owner's deadline, which is measured
 * from before its request was sent). The margin is at least one Redis round trip, which is why the
 * clock-mapping error of child processes must stay well below it (child.ts keeps it to tens of µs).
 *
 * ## Unknown outcomes
 *
 * - An acquire that failed before anything was written (offline, closed client) is a known "no".
 * - An acquire whose caller got an error after it may have been written (connection reset,
 *   timeout) has an unknown outcome. Its caller was told "no" and does not act, but Redis may have
 *   granted it: a *ghost* hold that lasts until its key expires, at least `sent + lease`. Whether
 *   any ghost exists is decided by the fence counter, which INCRs on every fresh grant: tokens
 *   between the values read before and after the run that no known hold received belong to ghosts.
 *   For each ghost, the next known holder must have started no earlier than the earliest possible
 *   ghost expiry (earliest send among the candidates + lease); otherwise two holders overlapped.
 * - An acquire that a process sent but never reported back (it was SIGKILLed or is still stopped)
 *   might have been granted *and acted on*: it counts as a possible hold from its send time until
 *   the process died (or forever, if it lives on without reporting).
 * - A renewal with an unknown outcome never extends a live holder's deadline (the library does not
 *   extend on errors either); for a killed process it does, since it may have succeeded unseen.
 * - A release with an unknown outcome does not end a hold: the holder may still be inside it.
 *
 * ## Holds no acquire reply shows
 *
 * - A release that answers `{4, token}` granted the lock to the waiter of the same process it names: a hold of
 *   that owner with that token from the release's send time (the library may hand it over as the release is
 *   sent: the releasing hold's lease covers the gap) until that send time plus the waiter's lease.
 * - A handoff message `c:<owner> <token> <claimMs>` (a `handed` record) proves a hold of that owner from its
 *   receipt when a call of that owner's process ran while it queued and saw a smaller token: a refused attempt
 *   (`{0, pttl, fence}`) or a release naming it that queued it (`{3, token}`). Tokens only grow, so the handoff
 *   ran after that call, which ran after it was sent: the claim lasts at least until the latest such send time
 *   plus claimMs (core/by-message.ts; the library holds on no other proof). A message no call shows ran after is
 *   no hold (a late message: the owner looks with an attempt, recorded as usual), and neither is a message that
 *   comes after that owner sent a release (its waiter is gone: a grant answered too late is refused and released).
 */
import type { OpRecord } from "../fixtures/wire.mjs";

export interface Source {
  name: string;
  /** Wire records, times on the parent's time base. */
  ops: readonly OpRecord[];
  /** Uncertainty of those times in ms (0 in-process). */
  errMs: number;
  /** When the process was SIGKILLed, if it was. */
  diedAt?: number;
}

export interface Hold {
  key: string;
  owner: string;
  source: string;
  start: number;
  end: number;
  /** The fencing token of the grant; null for possible holds. */
  token: number | null;
  possible: boolean;
  /** What showed the grant: an acquire's reply, a release granting the waiter it names, a handoff message. */
  via: GrantSeen;
}

export type GrantSeen = "acquire" | "local-grant" | "message";

export interface UnknownAcquire {
  key: string;
  owner: string;
  source: string;
  sent: number;
  leaseMs: number;
}

export interface Overlap {
  key: string;
  a: Hold;
  b: Hold;
  overlapMs: number;
}

export interface FenceRange {
  /** `fence:{r}` before the run and after it, for the lock key `<prefix>{r}`. */
  before: number;
  after: number;
}

export interface Verdict {
  holds: Hold[];
  unknown: UnknownAcquire[];
  /** Tokens that no known hold received: ghost grants of unknown-outcome acquires. */
  ghosts: number;
  overlaps: Overlap[];
  /** Problems with ghosts (a grant nobody sent, or a holder that got in before a ghost expired). */
  ghostViolations: string[];
}

interface Open {
  start: number;
  deadline: number;
  token: number;
  via: GrantSeen;
}

/** A call the store ran while an owner queued, and the last token issued then (see the header). */
interface Probe {
  sent: number;
  fence: number;
}

/** Lease-validity holds and unknown acquires of one process (see the header). */
export function holdsOf(src: Source): { holds: Hold[]; unknown: UnknownAcquire[] } {
  const holds: Hold[] = [];
  const unknown: UnknownAcquire[] = [];
  const open = new Map<string, Open>();
  const probes = new Map<string, Probe[]>();
  /** When each owner's last release was sent (whatever its outcome). */
  const released = new Map<string, number>();
  const probe = (id: string, p: Probe) => {
    const list = probes.get(id);
    if (list) list.push(p);
    else probes.set(id, [p]);
  };
  const dead = src.diedAt !== undefined;
  const close = (id: string, key: string, owner: string, o: Open, at: number) => {
    open.delete(id);
    const end = Math.min(at, o.deadline, src.diedAt ?? Number.POSITIVE_INFINITY) + src.errMs;
    const start = o.start - src.errMs;
    if (end > start)
      holds.push({ key, owner, source: src.name, start, end, token: o.token, possible: false, via: o.via });
  };
  const ops = [...src.ops].sort((x, y) => x.sent - y.sent);
  for (const rec of ops) {
    rec.items.forEach((it, i) => {
      const id = `${it.key}\n${it.owner}`;
      const o = open.get(id);
      const settled = rec.outcome === "ok";
      switch (rec.op) {
        case "acquire": {
          if (settled) {
            const r = rec.reply as number[];
            if (r[0] === 0 && r[2] !== undefined) probe(id, { sent: rec.sent, fence: Number(r[2]) });
            if (r[0] !== 1) return;
            const deadline = rec.sent + it.leaseMs;
            if (o) o.deadline = Math.max(o.deadline, deadline);
            else open.set(id, { start: rec.done!, deadline, token: Number(r[2]), via: "acquire" });
          } else if (rec.outcome === "error" && rec.notSent) {
            return;
          } else if (rec.outcome === "pending") {
            // Sent, never reported: it may have been granted and acted on until the process died.
            const end = src.diedAt ?? Number.POSITIVE_INFINITY;
            holds.push({
              key: it.key,
              owner: it.owner,
              source: src.name,
              start: rec.sent - src.errMs,
              end: end + src.errMs,
              token: null,
              possible: true,
              via: "acquire",
            });
          } else {
            unknown.push({
              key: it.key,
              owner: it.owner,
              source: src.name,
              sent: rec.sent,
              leaseMs: it.leaseMs,
            });
          }
          return;
        }
        case "renew":
        case "renewMany": {
          if (!o) return;
          const r = rec.op === "renew" ? rec.reply : (rec.reply as unknown[] | undefined)?.[i];
          const maybe = dead && rec.outcome !== "ok" && !rec.notSent;
          if ((settled && Number(r) === 1) || maybe) o.deadline = Math.max(o.deadline, rec.sent + it.leaseMs);
          return;
        }
        case "release": {
          released.set(id, rec.sent);
          if (!settled) return;
          const r = rec.reply as number[];
          // 1 = decremented: the owner still holds it (re-entry). 2 = released, 0 = not the owner; 3 = handed to
          // another process's waiter, 4 = granted to the waiter it names (rec.next).
          if (o && r[0] !== 1) close(id, it.key, it.owner, o, rec.sent);
          if (!rec.next) return;
          const next = `${it.key}\n${rec.next.owner}`;
          if (r[0] === 3) probe(next, { sent: rec.sent, fence: Number(r[1]) });
          if (r[0] === 4) {
            const deadline = rec.sent + rec.next.leaseMs;
            const held = open.get(next);
            if (held) held.deadline = Math.max(held.deadline, deadline);
            else open.set(next, { start: rec.sent, deadline, token: Number(r[1]), via: "local-grant" });
          }
          return;
        }
        case "handed": {
          // The owner had given the lock back before the message came (a grant it refused as too late, say):
          // its waiter is gone, and the library holds nothing on a message nobody waits for.
          if ((released.get(id) ?? Number.POSITIVE_INFINITY) <= rec.sent) return;
          if (o && o.deadline > rec.sent) return;
          if (o) close(id, it.key, it.owner, o, o.deadline);
          const token = rec.token!;
          const after = (probes.get(id) ?? []).filter((p) => p.fence < token && p.sent <= rec.sent);
          if (after.length === 0) return;
          const deadline = Math.max(...after.map((p) => p.sent)) + it.leaseMs;
          // A claim that ran out before its message came (a paused process) proves nothing.
          if (deadline > rec.sent) open.set(id, { start: rec.sent, deadline, token, via: "message" });
          return;
        }
        default:
          return;
      }
    });
  }
  for (const [id, o] of open) {
    const [key, owner] = id.split("\n") as [string, string];
    close(id, key, owner, o, Number.POSITIVE_INFINITY);
  }
  return { holds, unknown };
}

/** Every pair of holds of different owners on one key that overlap in time. */
export function overlaps(holds: readonly Hold[]): Overlap[] {
  const out: Overlap[] = [];
  const byKey = new Map<string, Hold[]>();
  for (const h of holds) {
    const list = byKey.get(h.key);
    if (list) list.push(h);
    else byKey.set(h.key, [h]);
  }
  for (const [key, list] of byKey) {
    list.sort((x, y) => x.start - y.start);
    const active: Hold[] = [];
    for (const h of list) {
      for (let i = active.length - 1; i >= 0; i--) if (active[i]!.end <= h.start) active.splice(i, 1);
      for (const a of active) {
        if (a.owner !== h.owner) out.push({ key, a, b: h, overlapMs: Math.min(a.end, h.end) - h.start });
      }
      active.push(h);
    }
  }
  return out;
}

/** Above this many tokens between the fence's before and after values, tokens are time-based (see checkGhosts). */
const MAX_ENUMERATED_TOKENS = 100_000;

/**
 * Ghost grants of one key (see the header): tokens in (before, after] that no known hold got.
 * Returns how many there were and what is wrong with them, if anything.
 */
export function checkGhosts(
  key: string,
  holds: readonly Hold[],
  unknown: readonly UnknownAcquire[],
  fence: FenceRange,
): { ghosts: number; violations: string[] } {
  const known = holds.filter((h) => h.key === key && !h.possible && h.token !== null);
  const tokens = new Set(known.map((h) => h.token));
  const candidates = unknown.filter((u) => u.key === key);
  const violations: string[] = [];
  let ghosts = 0;
  // Tokens are max(last + 1, Redis TIME in µs): consecutive only within one microsecond, so the values
  // between two known tokens cannot be enumerated. Then only the last grant is visible (the fence's final
  // value with no known hold behind it); exclusion itself is still checked from the holds above.
  const enumerable = fence.after - fence.before <= MAX_ENUMERATED_TOKENS;
  const maxKnown = Math.max(fence.before, ...known.map((h) => h.token!));
  const range = enumerable
    ? { from: fence.before + 1, to: fence.after }
    : { from: fence.after, to: fence.after };
  for (let t = range.from; t <= range.to; t++) {
    if (!enumerable && t <= maxKnown) continue;
    if (tokens.has(t)) continue;
    ghosts++;
    const next = known
      .filter((h) => h.token! > t)
      .sort((x, y) => x.token! - y.token!)
      .at(0);
    const before = candidates.filter((u) => next === undefined || u.sent < next.start);
    if (before.length === 0) {
      violations.push(
        `${key}: token ${t} was granted, but no acquire with an unknown outcome could have got it`,
      );
      continue;
    }
    if (!next) continue;
    const earliestExpiry = Math.min(...before.map((u) => u.sent + u.leaseMs));
    if (next.start < earliestExpiry) {
      violations.push(
        `${key}: token ${next.token} (${next.owner}) started ${(earliestExpiry - next.start).toFixed(2)} ms before ghost token ${t} could have expired`,
      );
    }
  }
  if (ghosts > candidates.length) {
    violations.push(`${key}: ${ghosts} ghost grants but only ${candidates.length} unknown acquires`);
  }
  return { ghosts, violations };
}

/** Runs everything above over the processes of one run. */
export function check(sources: readonly Source[], fences: Record<string, FenceRange> = {}): Verdict {
  const holds: Hold[] = [];
  const unknown: UnknownAcquire[] = [];
  for (const s of sources) {
    const r = holdsOf(s);
    holds.push(...r.holds);
    unknown.push(...r.unknown);
  }
  let ghosts = 0;
  const ghostViolations: string[] = [];
  const keys = new Set([...unknown.map((u) => u.key), ...Object.keys(fences)]);
  for (const key of keys) {
    const fence = fences[key];
    if (!fence) {
      ghostViolations.push(`${key}: unknown acquire outcomes but no fence range to resolve them`);
      continue;
    }
    const g = checkGhosts(key, holds, unknown, fence);
    ghosts += g.ghosts;
    ghostViolations.push(...g.violations);
  }
  return { holds, unknown, ghosts, overlaps: overlaps(holds), ghostViolations };
}

export function describe(v: Verdict): string {
  const show = (h: Hold) =>
    `${h.owner}@${h.source} [${h.start.toFixed(2)}, ${h.end.toFixed(2)}]${h.possible ? " (possible)" : ` token ${h.token}`}`;
  return [
    ...v.overlaps.map((o) => `${o.key}: ${show(o.a)} overlaps ${show(o.b)} by ${o.overlapMs.toFixed(2)} ms`),
    ...v.ghostViolations,
  ].join("\n");
}
