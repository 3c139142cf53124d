import { Gate } from "../../src/core/waiters.js";
import type { LockHandle } from "../../src/types.js";
import { type Kind, type KindsState, type KProc, keyOf, type MultiWait } from "./kinds-state.js";
import { queueOf } from "./shared-model.js";
import { ORPHAN } from "./weather.js";

/** A queued waiter of another process may go first (the mutex's fairness): see README, lost wake-up. */
export const QUEUE_LEASE = 600;

/** The invariants of a kinds run, after every event (README: semaphores, read-write locks, multi-resource). */
export function checkKinds(s: KindsState): void {
  s.stats.events++;
  checkExclusion(s);
  checkRedisAgrees(s);
  if (s.redis().tokenWentBack) s.fail(`a token went back: ${s.redis().tokenWentBack}`);
  checkWakeUps(s);
  checkDeadlock(s);
  checkHeldByNobody(s);
  s.lastCheckAt = s.world.now;
}

/** Whether Redis holds what the handle believes it holds: its owner's live hold, of its grant, of its mode. */
export function inRedis(s: KindsState, kind: Kind, h: LockHandle): boolean {
  if (kind === "mutex") {
    const owners = s.redis().owners(h.key);
    const handedBy = (h as { handedBy?: string }).handedBy;
    return owners.includes(h.owner) || (handedBy !== undefined && owners.includes(handedBy));
  }
  const hold = s.shared.live(h.key).get(h.owner);
  return hold !== undefined && hold.t === h.token && (kind === "write" ? hold.w : hold.r) > 0;
}

/**
 * Never more owners than permits in a semaphore; a writer beside no other owner (reader or writer); one owner
 * of a mutex. Owners, not handles: re-entries (nested withLock, explicit owner) share their owner's hold.
 */
function checkExclusion(s: KindsState): void {
  const by = new Map<string, { readers: Set<string>; writers: Set<string> }>();
  for (const { h, kind } of s.valid()) {
    const id = `${kind === "read" || kind === "write" ? "rw" : kind} ${h.resource}`;
    const o = by.get(id) ?? { readers: new Set(), writers: new Set() };
    (kind === "write" || kind === "mutex" ? o.writers : o.readers).add(h.owner);
    by.set(id, o);
  }
  for (const [id, { readers, writers }] of by) {
    const [kind, resource] = id.split(" ") as [string, string];
    const permits = s.permits.get(resource) ?? 1;
    if (kind === "permit" && readers.size > permits)
      s.fail(
        `semaphore ${resource} (${permits} permits) held by ${readers.size} owners: ${[...readers].join(", ")}`,
      );
    if (writers.size > 1)
      s.fail(`two ${kind === "rw" ? "writers" : "holders"} of ${resource}: ${[...writers].join(", ")}`);
    const others = [...readers].filter((o) => !writers.has(o));
    if (writers.size === 1 && others.length > 0)
      s.fail(`reader ${others[0]} of ${resource} beside its writer ${[...writers][0]}`);
  }
}

/**
 * A handle that counts as holding is backed by Redis: its owner's hold is live there (lease not ended in
 * Redis time), was granted with the handle's token, and counts at least as many holds of its mode as the
 * owner's handles of that mode (a release or renewal would otherwise act on a hold that is not the handle's).
 */
function checkRedisAgrees(s: KindsState): void {
  const counts = new Map<string, number>();
  for (const { proc, h, kind } of s.valid()) {
    if (!inRedis(s, kind, h)) {
      const found = kind === "mutex" ? s.redis().owners(h.key) : s.shared.live(h.key).get(h.owner);
      s.fail(
        `${proc.sim.name}: ${kind} handle of ${h.owner} on ${h.resource} (token ${h.token}) reports held, but Redis has ${JSON.stringify(found ?? null)}`,
      );
      return;
    }
    if (kind === "mutex") continue;
    const id = `${h.key}\n${h.owner}\n${kind === "write" ? "w" : "r"}`;
    counts.set(id, (counts.get(id) ?? 0) + 1);
  }
  for (const [id, n] of counts) {
    const [key, owner, side] = id.split("\n") as [string, string, "r" | "w"];
    const hold = s.shared.live(key).get(owner)!;
    if (hold[side] < n)
      s.fail(`${n} held ${side} handles of ${owner} on ${key}, but Redis counts ${JSON.stringify(hold)}`);
  }
}

/**
 * No lost wake-up: a waiter of a running process whose lock would be granted to it now gets it (or another
 * waiter does) within the bound the mutex uses (weather.ts wakeBoundOf): a free permit, a read hold with no
 * writer and no writer's mark, a write hold with no holder. A multi-resource acquire waits for one lock at a
 * time. The mutex and the semaphore allow one queue lease more while a live entry queues (their fairness).
 */
function checkWakeUps(s: KindsState): void {
  const now = s.world.now;
  const late = (
    w: { grantableSince?: number; cause?: string },
    grantable: boolean,
    allowance: number,
    what: string,
    cause?: () => string | undefined,
  ) => {
    if (!grantable) {
      w.grantableSince = undefined;
      return;
    }
    if (w.grantableSince === undefined) {
      w.grantableSince = now;
      w.cause = cause?.();
    }
    if (now - w.grantableSince > allowance)
      s.fail(
        `${what} grantable for ${now - w.grantableSince} ms while its waiter waits (lost wake-up${w.cause ? ` after ${w.cause}` : ""})`,
      );
  };
  for (const w of s.pending) {
    if (w.waitMs === 0 || !s.running(w.proc)) {
      w.grantableSince = undefined;
      continue;
    }
    if (w.kind === "mutex")
      late(w, mutexFree(s, w.resource), mutexAllowance(s, w.resource), `lock ${w.resource}`);
    else {
      const key = keyOf(w.kind, w.resource);
      const grantable = s.shared.wouldGrant(key, w.owner, w.kind, s.permits.get(w.resource) ?? 1);
      const what = `${w.kind} of ${w.resource}${w.owner ? ` for ${w.owner}` : ""}`;
      // As the mutex: one queue lease more while another process's live entry queues (fair admission).
      const { q, qt } = queueOf(key);
      const queued = w.kind === "permit" && s.redis().liveEntries(q, qt).length > 0;
      late(w, grantable, s.wakeBound + (queued ? QUEUE_LEASE : 0), what, () =>
        w.kind === "read" ? readerFreedBy(s, key) : undefined,
      );
    }
  }
  for (const m of s.multis) {
    const r = m.waitingOn;
    if (r === undefined || m.waitMs === 0 || !s.running(m.proc)) m.grantableSince = undefined;
    else
      late(m, mutexFree(s, r), mutexAllowance(s, r), `lock ${r} (multi-resource acquire of ${m.resources})`);
  }
}

/**
 * Two ways a reader's lock frees up that --kinds found announced by nothing (fixed since: a downgrade now
 * publishes, and a reader kept out by a mark sleeps no longer than the mark): named in a failure, should
 * either come back.
 */
function readerFreedBy(s: KindsState, key: string): string | undefined {
  const now = s.redis().nowMs();
  if (s.shared.downgrades.get(key) === now) return "a downgrade";
  const mark = Number(s.redis().hash(key)?.get("~writer-waits") ?? "0");
  if (mark > s.lastCheckAt && mark <= now) return "a writer's mark ran out";
  return undefined;
}

const mutexFree = (s: KindsState, r: string) => s.redis().owners(keyOf("mutex", r)).length === 0;
const mutexAllowance = (s: KindsState, r: string) =>
  s.wakeBound + (s.redis().liveEntries(`queue:${r}`, `queue-leases:${r}`).length > 0 ? QUEUE_LEASE : 0);

/**
 * No deadlock among multi-resource acquires: none waits (directly or through others) for a lock held by a
 * grant of its own. An edge runs from a waiting acquire to the acquire whose grant holds the lock it waits for.
 */
function checkDeadlock(s: KindsState): void {
  const waitsFor = new Map<MultiWait, MultiWait>();
  for (const m of s.multis) {
    if (m.waitingOn === undefined || m.waitMs === 0 || m.proc.closed || m.proc.crashed) continue;
    const holders = s.redis().owners(keyOf("mutex", m.waitingOn));
    const other = [...s.multis].find((o) => o !== m && holders.some((h) => o.owners.has(h)));
    if (other) waitsFor.set(m, other);
  }
  for (const start of waitsFor.keys()) {
    const path: MultiWait[] = [];
    for (let m: MultiWait | undefined = start; m && !path.includes(m); m = waitsFor.get(m)) path.push(m);
    if (waitsFor.get(path.at(-1)!) === start)
      s.fail(
        `deadlock: ${path.map((m) => `${m.proc.sim.name} [${m.resources}] waits for ${m.waitingOn}`).join(", held by ")}, held by the first`,
      );
  }
}

/**
 * I11, as run.ts: every owner Redis names for a mutex, a semaphore permit or a read or write hold has, in its
 * process, a handle its caller has not released, a mutex hold granted early from it, a waiter that still waits
 * under that name, or a multi-resource acquire in progress granted under it. One with none of these must be gone
 * within ORPHAN.boundMs of its process running undisturbed (run.ts says why each grace). Not judged: a closed or
 * crashed process, and the owners the library leaves to the lease (KindsState.leftToLease).
 */
function checkHeldByNobody(s: KindsState): void {
  const now = s.world.now;
  const seen = new Set<string>();
  for (const key of s.redis().keys()) {
    const m = /^lock:(semaphore:|rw:)?\{(.*)\}$/.exec(key);
    if (!m) continue;
    const shared = m[1] !== undefined;
    const resource = m[2]!;
    const owners = shared ? [...s.shared.live(key).keys()] : s.redis().owners(key);
    for (const o of owners) {
      const p = s.procs.find((x) => o.startsWith(`${x.sim.name}:`));
      if (!p || p.closed || p.crashed || !undisturbed(s, p)) continue;
      if (s.leftToLease.has(o) || claimed(s, p, key, resource, o)) continue;
      const id = `${key}\n${o}`;
      seen.add(id);
      const since = s.orphanSince.get(id) ?? now;
      s.orphanSince.set(id, since);
      if (now - since > ORPHAN.boundMs)
        s.fail(
          `${key} held by ${o} for ${now - since} ms, and nobody holds it or waits under that name (held by nobody)`,
        );
    }
  }
  for (const id of s.orphanSince.keys()) if (!seen.has(id)) s.orphanSince.delete(id);
}

const undisturbed = (s: KindsState, p: KProc): boolean =>
  s.world.now - p.conn.lastLossAt > ORPHAN.lossGraceMs &&
  s.world.now - p.conn.lastSlowAt > ORPHAN.slowGraceMs &&
  s.world.now - (p.sim.pausedUntil ?? Number.NEGATIVE_INFINITY) > ORPHAN.slowGraceMs;

function claimed(s: KindsState, p: KProc, key: string, resource: string, o: string): boolean {
  for (const { proc, h } of s.unreleased()) {
    if (proc !== p || h.key !== key) continue;
    if (h.owner === o || ((h as { handedBy?: string }).handedBy === o && h.isHeld())) return true;
  }
  for (const m of s.multis) if (m.proc === p && m.owners.has(o)) return true;
  return coresOf(p).some((core) => {
    const g = core.gates.get(resource);
    return g instanceof Gate && g.queue.some((w) => w.req.owner === o);
  });
}

/** The process's cores: the mutex's, the semaphores', and each side of the read-write locks. */
function coresOf(p: KProc): { gates: Map<string, unknown> }[] {
  type Core = { gates: Map<string, unknown> };
  const locks = p.locks as unknown as Core & {
    semaphores: { core?: Core };
    readWrites: { sides?: { read: Core; write: Core } };
  };
  const sides = locks.readWrites.sides;
  return [locks, locks.semaphores.core, sides?.read, sides?.write].filter((c): c is Core => c !== undefined);
}
