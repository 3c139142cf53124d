import type { Redis } from "ioredis";
import type { RunEvent } from "../../types.js";
import { runEventsKey, runMetaKey } from "./keys.js";

export type RunKind = "burst" | "scenario";

export interface RunMeta {
  kind: RunKind;
  instanceId: string;
  status: "running" | "finished";
  /** Epoch ms of the running instance's last heartbeat. */
  heartbeatAt: number;
  cancel: boolean;
}

/** Creates a run's metadata; its events list is created by the first append. Both expire after `ttlS`. */
export async function createRunMeta(
  redis: Redis,
  runId: string,
  meta: Pick<RunMeta, "kind" | "instanceId">,
  ttlS: number,
): Promise<void> {
  await redis
    .multi()
    .hset(runMetaKey(runId), { ...meta, status: "running", heartbeatAt: Date.now(), cancel: 0 })
    .expire(runMetaKey(runId), ttlS)
    .exec();
}

export async function readRunMeta(redis: Redis, runId: string): Promise<RunMeta | null> {
  const h = await redis.hgetall(runMetaKey(runId));
  if (!h.kind) return null;
  return {
    kind: h.kind as RunKind,
    instanceId: h.instanceId ?? "",
    status: h.status === "finished" ? "finished" : "running",
    heartbeatAt: Number(h.heartbeatAt ?? 0),
    cancel: h.cancel === "1",
  };
}

/** Appends one event and refreshes both keys' TTL; returns the event's index (its tracked id). */
export async function appendRunEvent(
  redis: Redis,
  runId: string,
  event: RunEvent,
  ttlS: number,
): Promise<number> {
  const r = await redis
    .multi()
    .rpush(runEventsKey(runId), JSON.stringify(event))
    .expire(runEventsKey(runId), ttlS)
    .expire(runMetaKey(runId), ttlS)
    .exec();
  const length = r?.[0]?.[1];
  if (typeof length !== "number") throw r?.[0]?.[0] ?? new Error("run event not stored");
  return length - 1;
}

/** Events from index `from` on. */
export async function readRunEvents(redis: Redis, runId: string, from: number): Promise<RunEvent[]> {
  const raw = await redis.lrange(runEventsKey(runId), from, -1);
  return raw.map((s) => JSON.parse(s) as RunEvent);
}

/** Updates a run's metadata (heartbeat, status, cancel) and refreshes its TTL, so it never lives without one. */
export async function markRun(
  redis: Redis,
  runId: string,
  fields: Record<string, string | number>,
  ttlS: number,
): Promise<void> {
  // HMSET, not HSET: not a command the deduct path sends, so the burst report does not count it.
  await redis.multi().hmset(runMetaKey(runId), fields).expire(runMetaKey(runId), ttlS).exec();
}
