import type { ReadWriteLock } from "@lockyard/lock";
import { sleep } from "../../lib/sleep.js";
import type { ReadWriteHold } from "../../types.js";

/** One actor of the story: when it asks (documented ms after the start), in which mode, and for how long. */
interface Part {
  actor: string;
  mode: "read" | "write";
  startMs: number;
  holdMs: number;
}

/**
 * Three readers overlap; the writer asks while they read and waits for them; two readers arrive while the
 * writer waits, and must wait too (a waiting writer keeps new readers out), then read together after it.
 */
export const STORY: readonly Part[] = [
  { actor: "reader 1", mode: "read", startMs: 0, holdMs: 600 },
  { actor: "reader 2", mode: "read", startMs: 100, holdMs: 600 },
  { actor: "reader 3", mode: "read", startMs: 200, holdMs: 600 },
  { actor: "writer", mode: "write", startMs: 300, holdMs: 500 },
  { actor: "reader 4", mode: "read", startMs: 400, holdMs: 400 },
  { actor: "reader 5", mode: "read", startMs: 500, holdMs: 400 },
];

export interface StoryOptions {
  /** Scales every documented duration (1 = as written above). */
  timeScale: number;
  /** How long each actor may wait for the lock; one that times out holds nothing (the verdict says so). */
  waitMs: number;
  signal: AbortSignal;
}

/**
 * Plays the story on `lock`, each actor with an owner of its own, and returns the holds that happened, with
 * times in ms since the start. Every hold is released, whatever happens.
 */
export async function playStory(lock: ReadWriteLock, o: StoryOptions): Promise<ReadWriteHold[]> {
  const started = performance.now();
  const now = () => Math.round((performance.now() - started) * 10) / 10;
  const ms = (documented: number) => Math.max(1, Math.round(documented * o.timeScale));
  const holds: ReadWriteHold[] = [];
  const play = async (part: Part) => {
    await sleep(ms(part.startMs), o.signal);
    const requestedMs = now();
    const side = part.mode === "read" ? lock.read : lock.write;
    const h = await side.acquire({ waitMs: o.waitMs, signal: o.signal }).catch((err: unknown) => {
      if (err instanceof Error && err.name === "LockTimeoutError") return null;
      throw err;
    });
    if (!h) return;
    const acquiredMs = now();
    try {
      await sleep(ms(part.holdMs), AbortSignal.any([o.signal, h.signal]));
    } finally {
      holds.push({
        actor: part.actor,
        mode: part.mode,
        requestedMs,
        acquiredMs,
        releasedMs: now(),
        token: h.token,
      });
      await h.release().catch(() => undefined);
    }
  };
  const settled = await Promise.allSettled(STORY.map(play));
  const failed = settled.find((s): s is PromiseRejectedResult => s.status === "rejected");
  if (failed) throw failed.reason;
  return holds.sort((a, b) => a.requestedMs - b.requestedMs || a.actor.localeCompare(b.actor));
}
