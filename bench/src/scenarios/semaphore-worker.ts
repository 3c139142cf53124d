// One process of scenario (i)'s cross-process rows, forked by semaphore-runs.ts: its share of the tasks on the
// one semaphore, with its own connections, started by the parent's barrier. Commands are counted here, in the
// process that sends them, and the totals go back over IPC.
import { semaphoreFloor } from "../contenders/semaphore/floor.js";
import { lockyardSemaphore } from "../contenders/semaphore/lockyard.js";
import { redisSemaphoreSemaphore } from "../contenders/semaphore/redis-semaphore.js";
import type { SemaphoreFactory, SemaphoreOptions } from "../contenders/semaphore/types.js";
import { callsDelta, clientCalls, connect, installCommandCounter } from "../harness/connections.js";
import { parentChannel } from "../harness/forked.js";
import { type PermitShare, type PermitTaskOptions, permitShare } from "./permit-once.js";

export interface SemaphoreWorkerSpec extends PermitTaskOptions {
  /** A semaphore contender id: lockyard or redis-semaphore. */
  lib: string;
  redisUrl: string;
  options: SemaphoreOptions;
  /** This process's index, for its warm-up keys. */
  index: number;
  tasks: number;
}

export interface SemaphoreWorkerResult {
  share: PermitShare;
  /** Top-level commands the library's connections sent during the timed run (housekeeping left out). */
  lockCalls: { total: number; byCommand: Record<string, number> };
  /** Commands the work connection sent (INCR/DECR), to take out of the server's count. */
  workCalls: number;
}

export type ToSemaphoreWorker =
  | { type: "spec"; spec: SemaphoreWorkerSpec }
  | { type: "go" }
  | { type: "close" };
export type FromSemaphoreWorker =
  | { type: "ready"; settings: string }
  | { type: "done"; result: SemaphoreWorkerResult }
  | { type: "closed" };

const FACTORIES: Record<string, SemaphoreFactory> = Object.fromEntries(
  [semaphoreFloor, lockyardSemaphore, redisSemaphoreSemaphore].map((f) => [f.id, f]),
);

const parent = parentChannel<ToSemaphoreWorker, FromSemaphoreWorker>();

async function main(): Promise<void> {
  installCommandCounter();
  const { spec } = await parent.receive("spec");
  const factory = FACTORIES[spec.lib];
  if (!factory) throw new Error(`unknown semaphore contender ${spec.lib}`);
  const c = await factory.create(spec.redisUrl, spec.options);
  const work = await connect(spec.redisUrl, "bench-work");
  // Warm-up on keys of this process's own: scripts loaded, JIT warm, a subscriber opened where there is one.
  await permitShare(c, work, {
    key: `i:warm:${spec.index}`,
    gaugeKey: `i:warm-holders:${spec.index}`,
    workMs: spec.workMs,
    tasks: 20,
  });
  await parent.send({ type: "ready", settings: c.settings });
  await parent.receive("go");
  const lib0 = clientCalls(`lib-${spec.lib}`);
  const work0 = clientCalls("bench-work");
  const share = await permitShare(c, work, spec);
  const lockCalls = callsDelta(lib0, clientCalls(`lib-${spec.lib}`));
  const workCalls = callsDelta(work0, clientCalls("bench-work")).total;
  await parent.send({ type: "done", result: { share, lockCalls, workCalls } });
  await parent.receive("close");
  await c.close();
  work.disconnect();
  await parent.send({ type: "closed" });
  process.exit(0);
}

main().catch(async (err: unknown) => {
  await parent
    .send({ type: "error", message: err instanceof Error ? (err.stack ?? err.message) : String(err) })
    .catch(() => {});
  process.exit(1);
});
