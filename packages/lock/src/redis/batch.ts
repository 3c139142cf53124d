import { ReplyError } from "ioredis";
import type { AcquireReply, ReleaseListener, ReleaseReply } from "../core/backend.js";
import type { InOrder } from "./in-order.js";
import type { ScriptCommands } from "./scripts/index.js";
import { keySlot } from "./slot.js";
import { BATCH_CAP, chunks, type Pending, tickBatcher } from "./tick-batch.js";

interface AcquireCall extends Pending<AcquireReply> {
  key: string;
  fence: string;
  owner: string;
  leaseMs: number;
  more: string;
}

/** What a release names: the lock, where to announce it, and the hold it ends (see release.ts). */
export interface ReleaseTarget {
  key: string;
  channel: string;
  fence: string;
  owner: string;
  leaseMs: number;
  /** The token the hold was granted with; null when unknown (no token check). */
  token: number | null;
  /** Hears the answer at delivery, before any command sent after it is answered (see in-order.ts). */
  listener: ReleaseListener | undefined;
}

/**
 * The target is held by reference, not spread into the call: on Node 20's V8, `{ ...target, resolve, reject }`
 * (a spread followed by more properties) leaves the fast clone path and cost microseconds per release, with
 * garbage to match, and it made scenario (b) of the bench a third slower.
 */
interface ReleaseCall extends Pending<ReleaseReply> {
  target: ReleaseTarget;
}

export interface Batched {
  acquire(key: string, fence: string, owner: string, leaseMs: number, more: boolean): Promise<AcquireReply>;
  release(target: ReleaseTarget): Promise<ReleaseReply>;
}

const bySlot = (c: { key: string }) => keySlot(c.key);
const releaseSlot = (c: ReleaseCall) => keySlot(c.target.key);

/**
 * Acquires and releases issued in the same tick go out as one acquireMany/releaseMany call (per slot on a
 * Cluster, at most BATCH_CAP locks each): one command, one socket write and one script dispatch instead of
 * one per lock. A batch of one uses the single-lock script. A failed call rejects every caller in it.
 */
export function batchedScripts(cmd: ScriptCommands, sharded: boolean, order: InOrder): Batched {
  const shardedFlag = sharded ? "1" : "0";
  const group = sharded ? bySlot : undefined;
  const releaseGroup = sharded ? releaseSlot : undefined;

  const acquire = tickBatcher<AcquireCall>((batch) => {
    for (const part of chunks(batch, BATCH_CAP, group)) {
      if (part.length === 1) {
        const c = part[0]!;
        order.track(
          cmd.lockyardAcquire(c.key, c.fence, c.owner, c.leaseMs, c.more) as Promise<AcquireReply>,
          c,
        );
      } else sendAcquireMany(cmd, part, order);
    }
  });

  const release = tickBatcher<ReleaseCall>((batch) => {
    for (const part of chunks(batch, BATCH_CAP, releaseGroup)) {
      if (part.length === 1) {
        const c = part[0]!;
        const t = c.target;
        order.track(
          cmd.lockyardRelease(
            t.key,
            t.channel,
            t.fence,
            t.owner,
            t.leaseMs,
            shardedFlag,
            tokenArg(t.token),
          ) as Promise<ReleaseReply>,
          {
            resolve: (reply) => {
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
    acquire: (key, fence, owner, leaseMs, more) =>
      new Promise((resolve, reject) => {
        acquire({ key, fence, owner, leaseMs, more: more ? "1" : "0", resolve, reject });
      }),
    release: (target) =>
      new Promise((resolve, reject) => {
        release({ target, resolve, reject });
      }),
  };
}

function sendAcquireMany(cmd: ScriptCommands, part: AcquireCall[], order: InOrder): void {
  const n = part.length;
  const args: (string | number)[] = new Array(n * 5);
  for (let i = 0; i < n; i++) {
    const c = part[i]!;
    args[2 * i] = c.key;
    args[2 * i + 1] = c.fence;
    args[2 * n + 3 * i] = c.owner;
    args[2 * n + 3 * i + 1] = c.leaseMs;
    args[2 * n + 3 * i + 2] = c.more;
  }
  order.track(cmd.lockyardAcquireMany(2 * n, ...args), {
    resolve: (out) => {
      for (let i = 0; i < n; i++) {
        const c = part[i]!;
        const ok = out[3 * i];
        if (ok === 1) c.resolve([1, out[3 * i + 1] as number, out[3 * i + 2] as number]);
        else if (ok === 0) c.resolve([0, out[3 * i + 1] as number]);
        else c.reject(new ReplyError(String(out[3 * i + 1])));
      }
    },
    reject: (err: unknown) => {
      for (const c of part) c.reject(err);
    },
  });
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
  const args: (string | number)[] = new Array(n * 6 + 1);
  args[3 * n] = shardedFlag;
  for (let i = 0; i < n; i++) {
    const t = part[i]!.target;
    args[3 * i] = t.key;
    args[3 * i + 1] = t.channel;
    args[3 * i + 2] = t.fence;
    args[3 * n + 1 + 3 * i] = t.owner;
    args[3 * n + 2 + 3 * i] = t.leaseMs;
    args[3 * n + 3 + 3 * i] = tokenArg(t.token);
  }
  order.track(cmd.lockyardReleaseMany(3 * n, ...args), {
    resolve: (out) => {
      for (let i = 0; i < n; i++) {
        const c = part[i]!;
        const code = out[2 * i];
        if (code === 0 || code === 1 || code === 2) {
          const reply: ReleaseReply = [code, out[2 * i + 1] as number];
          c.target.listener?.releaseReplied(reply);
          c.resolve(reply);
        } else c.reject(new ReplyError(String(out[2 * i + 1])));
      }
    },
    reject: (err: unknown) => {
      for (const c of part) c.reject(err);
    },
  });
}
