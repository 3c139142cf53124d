import type { Cluster, Redis } from "ioredis";
import { neverResend } from "../no-resend.js";
import { acquire } from "./acquire.js";
import { acquireMany } from "./acquire-many.js";
import { fencedRead } from "./fenced-read.js";
import { fencedWrite } from "./fenced-write.js";
import { leave } from "./leave.js";
import { redlockAcquire } from "./redlock-acquire.js";
import { redlockRelease } from "./redlock-release.js";
import { release } from "./release.js";
import { releaseMany } from "./release-many.js";
import { renew } from "./renew.js";
import { renewMany } from "./renew-many.js";
import { sharedAcquire } from "./shared-acquire.js";
import { sharedLeave } from "./shared-leave.js";
import { sharedRelease } from "./shared-release.js";
import { sharedRenewMany } from "./shared-renew-many.js";
import { sharedWithdraw } from "./shared-withdraw.js";

export type RedisClient = Redis | Cluster;

export const scripts = [
  acquire,
  acquireMany,
  renew,
  renewMany,
  release,
  releaseMany,
  leave,
  fencedWrite,
  fencedRead,
  sharedAcquire,
  sharedLeave,
  sharedRelease,
  sharedRenewMany,
  sharedWithdraw,
] as const;

/**
 * Every script of the library, for the never-resend guard: the ones above, and Redlock's two, which
 * src/redlock/send.ts sends itself (to know whether a call left the process) on the same node clients.
 */
const neverSentTwice = [...scripts, redlockAcquire, redlockRelease] as const;

type K = string;
/** How a shared lock is taken (shared-acquire.ts): a semaphore permit, a read hold or a write hold. */
export type SharedMode = "permit" | "read" | "write";
/** Typed view of the commands defineCommand adds (ioredis does EVALSHA with the NOSCRIPT fallback). */
export interface ScriptCommands {
  lockyardAcquire(
    lock: K,
    fence: K,
    queue: K,
    queueLeases: K,
    owner: string,
    leaseMs: number,
    more: string,
    join: string,
    queueLeaseMs: number,
  ): Promise<[number, number, number?]>;
  /** Flat: [ok, countOrPttlOrMessage, token] per lock. */
  lockyardAcquireMany(numKeys: number, ...keysThenArgs: (string | number)[]): Promise<(number | string)[]>;
  lockyardRenew(lock: K, owner: string, leaseMs: number): Promise<number>;
  lockyardRenewMany(numKeys: number, ...keysThenArgs: (string | number)[]): Promise<number[]>;
  lockyardRelease(
    lock: K,
    channel: K,
    fence: K,
    queue: K,
    queueLeases: K,
    owner: string,
    leaseMs: number,
    sharded: string,
    token: string,
    queueLeaseMs: number,
    next: string,
    nextLeaseMs: number,
    keepMs: number,
  ): Promise<[number, number]>;
  lockyardLeave(
    lock: K,
    channel: K,
    fence: K,
    queue: K,
    queueLeases: K,
    owner: string,
    successor: string,
    successorLeaseMs: number,
    sharded: string,
    queueLeaseMs: number,
  ): Promise<[number, number]>;
  /** Flat: [code, leftOrMessage] per lock. */
  lockyardReleaseMany(numKeys: number, ...keysThenArgs: (string | number)[]): Promise<(number | string)[]>;
  lockyardFencedWrite(
    stock: K,
    token: number,
    delta: number,
    valueField: string,
    fenceField: string,
  ): Promise<[number, number]>;
  lockyardSharedAcquire(
    lock: K,
    fence: K,
    queue: K,
    queueLeases: K,
    channel: K,
    owner: string,
    leaseMs: number,
    more: string,
    mode: SharedMode,
    permits: number,
    writerMarkMs: number,
    join: string,
    queueLeaseMs: number,
    sharded: string,
  ): Promise<[number, number, number]>;
  lockyardSharedLeave(
    queue: K,
    queueLeases: K,
    channel: K,
    owner: string,
    sharded: string,
    successor: string,
    queueLeaseMs: number,
  ): Promise<number>;
  lockyardSharedWithdraw(lock: K, channel: K, owner: string, sharded: string): Promise<number>;
  lockyardSharedRelease(
    lock: K,
    channel: K,
    queue: K,
    queueLeases: K,
    fence: K,
    owner: string,
    mode: Exclude<SharedMode, "permit">,
    token: string,
    sharded: string,
    next: string,
    nextLeaseMs: number,
    queueLeaseMs: number,
  ): Promise<[number, number, number?]>;
  lockyardSharedRenewMany(numKeys: number, ...keysThenArgs: (string | number)[]): Promise<number[]>;
  lockyardFencedRead(
    lock: K,
    fence: K,
    guarded: K,
    owner: string,
    fenceField: string,
    ...read: string[]
  ): Promise<[number, ...(string | null)[]]>;
}

const defined = new WeakSet<object>();

/**
 * Registers the scripts on a client once; returns the client typed with them. They are never re-sent after a
 * reconnect, whatever the client's settings (no-resend.ts).
 */
export function withScripts(redis: RedisClient): ScriptCommands {
  if (!defined.has(redis)) {
    neverResend(redis, neverSentTwice);
    for (const s of scripts) {
      if (typeof (redis as unknown as Record<string, unknown>)[s.name] !== "function") {
        redis.defineCommand(s.name, s.numberOfKeys === undefined ? { lua: s.lua } : s);
      }
    }
    defined.add(redis);
  }
  return redis as unknown as ScriptCommands;
}
