import { setTimeout as sleep } from "node:timers/promises";
import type { Redis } from "ioredis";

/** K: keyspace channels; g: DEL/EXPIRE/PEXPIRE; h: HSET/HINCRBY/HDEL; x: expired; e: evicted. */
const NEEDED = "ghxe";
/** Backoff of `enableWhenReachable` while Redis cannot be reached. */
const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 2_000;
/** What the `A` alias stands for in notify-keyspace-events. */
const ALL = "g$lshzxetd";
/**
 * After this event the key holds a lock: the acquire script writes the owner field with HSET (and a refused
 * acquire the waiters mark of a held lock). A release's HINCRBY is not it: its event may come after the request
 * of a read that finds the key gone, and the lock would be shown twice.
 */
export const TAKEN_EVENT = "hset";

/** The flags to add to a notify-keyspace-events value so lock keys report every change ("" when none). */
export function missingFlags(current: string): string {
  const classes = new Set(current.includes("A") ? `${current}${ALL}` : current);
  let add = current.includes("K") ? "" : "K";
  for (const f of NEEDED) if (!classes.has(f)) add += f;
  return add;
}

export type NotificationsResult = { ok: true; set: string | null } | { ok: false; reason: string };

/**
 * Makes one Redis node publish keyspace notifications for hash and generic commands, keeping whatever flags are
 * already on (other software may rely on them). Refused CONFIG (an ACL without +config, a managed service that
 * renames or blocks it) is reported, not thrown: the caller falls back to periodic resyncs.
 */
export async function enableKeyspaceEvents(node: Redis): Promise<NotificationsResult> {
  try {
    const [, current = ""] = ((await node.config("GET", "notify-keyspace-events")) as string[]) ?? [];
    const add = missingFlags(current);
    if (add === "") return { ok: true, set: null };
    await node.config("SET", "notify-keyspace-events", `${current}${add}`);
    return { ok: true, set: `${current}${add}` };
  } catch (err) {
    // Only Redis's own answer is a refusal (NOPERM, unknown command…); Redis down fails the caller's start.
    if (!(err instanceof Error) || err.name !== "ReplyError") throw err;
    return { ok: false, reason: err.message };
  }
}

/**
 * `enableKeyspaceEvents`, tried again until Redis answers (or `signal` aborts: null). After a restart the
 * subscriber connection may be back before the one CONFIG goes over, whose commands then fail at once.
 */
export async function enableWhenReachable(
  node: Redis,
  signal: AbortSignal,
): Promise<NotificationsResult | null> {
  for (let delay = FIRST_RETRY_MS; !signal.aborted; delay = Math.min(delay * 2, MAX_RETRY_MS)) {
    try {
      return await enableKeyspaceEvents(node);
    } catch {
      await sleep(delay, undefined, { ref: false, signal }).catch(() => undefined);
    }
  }
  return null;
}
