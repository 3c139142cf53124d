import { ReplyError } from "ioredis";
import type { AcquireReply, ReleaseListener, ReleaseReply } from "../core/backend.js";
import type { InOrder } from "./in-order.js";
import type { ScriptCommands } from "./scripts/index.js";
import { keySlot } from "./slot.js";
import { BATCH_CAP, chunks, type Pending, tickBatcher } from "./tick-batch.js";

/** The keys of one lock: its hash, fence counter, waiter queue and queue entry leases (resource.ts). */
export interface LockKeySet {
  key: string;
  fence: string;
  queue: string;
  queueLeases: string;
}

/** What an acquire attempt names (see acquire.ts). */
export interface AcquireTarget extends LockKeySet {
  owner: string;
  leaseMs: number;
  /** "1": more waiters queue behind the caller. */
  more: string;
  /** "1": a waiter of its own name that joins the queue when refused and adopts a handoff. */
  join: string;
  queueLeaseMs: number;
}

/** What a release names: the lock, where to announce it, the hold it ends and who may take it (release.ts). */
export interface ReleaseTarget extends LockKeySet {
  channel: string;
  owner: string;
  leaseMs: number;
  /** The token the hold was granted with; null when unknown (no token check). */
  token: number | null;
  queueLeaseMs: number;
  /** The releasing process's next waiter ("" none) and its lease. */
  next: string;
  nextLeaseMs: number;
  /** Grant it to `next` while other processes' first waiter has queued for less than this (a bounded local streak). */
  keepMs: number;
  /** Hears the answer at delivery, before any command sent after it is answered (see in-order.ts). */
  listener: ReleaseListener | undefined;
}

/**
 * Targets are held by reference, not spread into the call: on Node 20's V8, `{ ...target, resolve, reject }`
 * (a spread followed by more properties) leaves the fast clone path and cost microseconds per release, with
 * garbage to match, and it made scenario (b) of the bench a third slower.
 */
interface AcquireCall extends Pending<AcquireReply> {
  target: AcquireTarget;
}
interface ReleaseCall extends Pending<ReleaseReply> {
  target: ReleaseTarget;
}

/** The acquire script's KEYS then ARGV for one lock, in the order acquire.ts reads them. */
export function acquireArgs(t: AcquireTarget) {
  return [
    t.key,
    t.fence,
    t.queue,
    t.queueLeases,
    t.owner,
    t.leaseMs,
    t.more,
    t.join,
    t.queueLeaseMs,
  ] as const;
}

export interface Batched {
  acquire(target: AcquireTarget): Promise<AcquireReply>;
  release(target: ReleaseTarget): Promise<ReleaseReply>;
  /** Sends this tick's calls now. */
  flush(): void;
}

const slotOf = (c: { target: { key: string } }) => keySlot(c.target.key);

/**
 * Acquires and releases issued in the same tick go out as one acquireMany/releaseMany call (per slot on a
 * Cluster, at most BATCH_CAP locks each): one command, one socket write and one script dispatch instead of
 * one per lock. A batch of one uses the single-lock script. A failed call rejects every caller in it.
 */
export function batchedScripts(cmd: ScriptCommands, sharded: boolean, order: InOrder): Batched {
  const shardedFlag = sharded ? "1" : "0";
  const group = sharded ? slotOf : undefined;

  const acquire = tickBatcher<AcquireCall>((batch) => {
    for (const part of chunks(batch, BATCH_CAP, group)) {
      if (part.length === 1) {
        const c = part[0]!;
        const t = c.target;
        order.track(cmd.lockyardAcquire(...acquireArgs(t)) as Promise<AcquireReply>, c);
      } else sendAcquireMany(cmd, part, order);
    }
  });

  const release = tickBatcher<ReleaseCall>((batch) => {
    for (const part of chunks(batch, BATCH_CAP, group)) {
      if (part.length === 1) {
        const c = part[0]!;
        const t = c.target;
        order.track(
          cmd.lockyardRelease(
            t.key,
            t.channel,
            t.fence,
            t.queue,
            t.queueLeases,
            t.owner,
            t.leaseMs,
            shardedFlag,
            tokenArg(t.token),
            t.queueLeaseMs,
            t.next,
            t.nextLeaseMs,
            t.keepMs,
          ) as Promise<RawReleaseReply>,
          {
            resolve: ([code, value, waited, others]) => {
              const reply = releaseReply(code, value, waited, others);
              t.listener?.releaseReplied(reply);
              c.resolve(reply);
            },
            reject: c.reject,
          },
        );
      } else sendReleaseMany(cmd, part, shardedFlag, order);
    }
  });

  return {
    acquire: (target) =>
      new Promise((resolve, reject) => {
        acquire({ target, resolve, reject });
      }),
    release: (target) =>
      new Promise((resolve, reject) => {
        release({ target, resolve, reject });
      }),
    flush() {
      acquire.flush();
      release.flush();
    },
  };
}

function sendAcquireMany(cmd: ScriptCommands, part: AcquireCall[], order: InOrder): void {
  const n = part.length;
  const args: (string | number)[] = new Array(n * 9);
  for (let i = 0; i < n; i++) {
    const t = part[i]!.target;
    args[4 * i] = t.key;
    args[4 * i + 1] = t.fence;
    args[4 * i + 2] = t.queue;
    args[4 * i + 3] = t.queueLeases;
    const a = 4 * n + 5 * i;
    args[a] = t.owner;
    args[a + 1] = t.leaseMs;
    args[a + 2] = t.more;
    args[a + 3] = t.join;
    args[a + 4] = t.queueLeaseMs;
  }
  order.track(cmd.lockyardAcquireMany(4 * n, ...args), {
    resolve: (out) => {
      for (let i = 0; i < n; i++) {
        const c = part[i]!;
        const ok = out[3 * i];
        if (ok === 1) c.resolve([1, out[3 * i + 1] as number, out[3 * i + 2] as number]);
        else if (ok === 0) c.resolve([0, out[3 * i + 1] as number, out[3 * i + 2] as number]);
        else c.reject(new ReplyError(String(out[3 * i + 1])));
      }
    },
    reject: (err: unknown) => {
      for (const c of part) c.reject(err);
    },
  });
}

/**
 * What the release script returns: code, token or count, and for a grant to `next` how long the first other
 * process's entry has queued and how many queue.
 */
type RawReleaseReply = [ReleaseReply[0], number, number?, number?];

function releaseReply(
  code: ReleaseReply[0],
  value: number,
  waited: number | undefined,
  others: number | undefined,
): ReleaseReply {
  return code === 4 ? [4, value, undefined, waited, undefined, others] : ([code, value] as ReleaseReply);
}

/** A token as the release script compares it: the decimal string the acquire script stored, or "" for none. */
function tokenArg(token: number | null): string {
  return token === null ? "" : String(token);
}

function sendReleaseMany(
  cmd: ScriptCommands,
  part: ReleaseCall[],
  shardedFlag: string,
  order: InOrder,
): void {
  const n = part.length;
  const args: (string | number)[] = new Array(n * 12 + 1);
  args[5 * n] = shardedFlag;
  for (let i = 0; i < n; i++) {
    const t = part[i]!.target;
    args[5 * i] = t.key;
    args[5 * i + 1] = t.channel;
    args[5 * i + 2] = t.fence;
    args[5 * i + 3] = t.queue;
    args[5 * i + 4] = t.queueLeases;
    const a = 5 * n + 1 + 7 * i;
    args[a] = t.owner;
    args[a + 1] = t.leaseMs;
    args[a + 2] = tokenArg(t.token);
    args[a + 3] = t.queueLeaseMs;
    args[a + 4] = t.next;
    args[a + 5] = t.nextLeaseMs;
    args[a + 6] = t.keepMs;
  }
  order.track(cmd.lockyardReleaseMany(5 * n, ...args), {
    resolve: (out) => {
      for (let i = 0; i < n; i++) {
        const c = part[i]!;
        const code = out[4 * i];
        if (code === 0 || code === 1 || code === 2 || code === 3 || code === 4) {
          const reply = releaseReply(
            code,
            out[4 * i + 1] as number,
            out[4 * i + 2] as number,
            out[4 * i + 3] as number,
          );
          c.target.listener?.releaseReplied(reply);
          c.resolve(reply);
        } else c.reject(new ReplyError(String(out[4 * i + 1])));
      }
    },
    reject: (err: unknown) => {
      for (const c of part) c.reject(err);
    },
  });
}
