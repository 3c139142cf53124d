import { createHash } from "node:crypto";
import type { Writable } from "node:stream";
import type { Redis } from "ioredis";
import type { AcquireReply, LockKeys, ReadsFn, ReleaseReply, WriteFn } from "../core/backend.js";
import type { ReadsFn as RedisReads, WriteFn as RedisWrite } from "../types.js";
import { type AcquireTarget, acquireArgs, type Batched, type ReleaseTarget } from "./batch.js";
import type { InOrder } from "./in-order.js";
import { acquire } from "./scripts/acquire.js";
import type { RedisClient, ScriptCommands } from "./scripts/index.js";

const noop = () => {};
const ACQUIRE_SHA = createHash("sha1").update(acquire.lua).digest("hex");

const corkedNow = new WeakSet<Writable>();

/**
 * Runs `send` with the connection's socket corked until the check phase of this event-loop turn, so the
 * commands it issues, and those every other request handled in the same turn issues (requests read from many
 * HTTP sockets at once, or resumed by one Redis reply), leave in one socket write: under load that is one
 * write per turn instead of one per request, which is most of what a round trip costs the client.
 * Only a ready single connection is corked; otherwise ioredis queues the commands, still in order.
 */
function corked(redis: RedisClient, send: () => void): void {
  const stream = (redis as { stream?: Writable }).stream;
  if (
    stream &&
    !corkedNow.has(stream) &&
    (redis as { status?: string }).status === "ready" &&
    typeof stream.cork === "function"
  ) {
    stream.cork();
    corkedNow.add(stream);
    setImmediate(() => {
      corkedNow.delete(stream);
      stream.uncork();
    });
  }
  send();
}

/**
 * An acquire attempt followed by the caller's read-only commands. On a single Redis they leave in one write,
 * the reads after the attempt on the same connection, so Redis runs them after the grant.
 * (`reads` never throws here: the core wraps it, see core/reads.ts.)
 */
export function acquireThenRead(
  redis: RedisClient,
  cmd: ScriptCommands,
  batched: Batched,
  order: InOrder,
  t: AcquireTarget,
  reads: ReadsFn,
): Promise<AcquireReply> {
  const lock: LockKeys = { key: t.key, fence: t.fence, owner: t.owner };
  if ((redis as { isCluster?: boolean }).isCluster === true) {
    return clusterAcquireThenRead(redis, batched, t, lock, reads);
  }
  const args = acquireArgs(t);
  let read!: Promise<unknown>;
  const answered = (reply: unknown): AcquireReply => {
    const r = reply as AcquireReply;
    return r[0] === 1 ? [1, r[1], r[2], read] : r;
  };
  // Redis lacked the script, so the reads ran before any grant: acquire as usual, then read again.
  const afterNoScript = async (err: unknown) => {
    if (!String((err as Error)?.message).includes("NOSCRIPT")) throw err;
    const r = (await cmd.lockyardAcquire(...args)) as AcquireReply;
    if (r[0] === 1) read = readAfterGrant(redis, reads, lock);
    return r;
  };
  return new Promise<AcquireReply>((resolve, reject) => {
    corked(redis, () => {
      // Plain EVALSHA, not the defined command: on NOSCRIPT ioredis would re-send that one after the reads.
      const attempt = (redis as Redis).evalsha(ACQUIRE_SHA, 4, ...args);
      read = (reads as RedisReads)(redis, lock);
      // The caller may never look at a failed attempt's read: its rejection must not go unhandled.
      read.catch(noop);
      order.track(attempt.catch(afterNoScript).then(answered), { resolve, reject });
    });
  });
}

/** The reads of a lock granted already (a handoff, or a grant on a Cluster): sent now, after the grant. */
export function readAfterGrant(redis: RedisClient, reads: ReadsFn, lock: LockKeys): Promise<unknown> {
  const read = (reads as RedisReads)(redis, lock);
  // The caller may never look at it (it gave up meanwhile): its rejection must not go unhandled.
  read.catch(noop);
  return read;
}

/** On a Cluster the reads may live in other slots: issued after the grant. */
async function clusterAcquireThenRead(
  redis: RedisClient,
  batched: Batched,
  t: AcquireTarget,
  lock: LockKeys,
  reads: ReadsFn,
): Promise<AcquireReply> {
  const r = await batched.acquire(t);
  if (r[0] !== 1) return r;
  return [1, r[1], r[2], readAfterGrant(redis, reads, lock)];
}

/**
 * The caller's write, then the release. On a single Redis both leave in one socket write and run in that order.
 * On a Cluster they may be on different nodes, so the release waits until the write has settled.
 * (If the write is an ioredis script that Redis lost while connected, e.g. after SCRIPT FLUSH, ioredis sends
 * it again once NOSCRIPT comes back, after the release: such writes must be fenced, as the stock demo's is.)
 */
export function writeThenRelease<T>(
  redis: RedisClient,
  batched: Batched,
  write: WriteFn<T>,
  target: ReleaseTarget,
  sharded: boolean,
): { reply: Promise<ReleaseReply>; write: Promise<PromiseSettledResult<T>> } {
  const run = (): Promise<PromiseSettledResult<T>> => {
    try {
      return (write as RedisWrite<T>)(redis).then(
        (value): PromiseSettledResult<T> => ({ status: "fulfilled", value }),
        (reason: unknown): PromiseSettledResult<T> => ({ status: "rejected", reason }),
      );
    } catch (reason) {
      return Promise.resolve({ status: "rejected", reason });
    }
  };
  // Batched: the releases of requests resumed in one tick share one call, sent at the tick's end, after
  // every write issued in it, and still inside the socket's cork.
  const release = () => batched.release(target);
  if (sharded) {
    const w = run();
    return { reply: w.then(release), write: w };
  }
  let w!: Promise<PromiseSettledResult<T>>;
  let reply!: Promise<ReleaseReply>;
  corked(redis, () => {
    w = run();
    reply = release();
  });
  return { reply, write: w };
}
