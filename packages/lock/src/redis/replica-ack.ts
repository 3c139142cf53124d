import type { Cluster, Redis } from "ioredis";
import type { LockBackend } from "../core/backend.js";
import { InvalidOptionError, QuorumError } from "../errors.js";
import { checkCount, checkMs } from "../options.js";

export interface ReplicaAckOptions {
  /**
   * After every acquisition, `WAIT` for this many replicas to acknowledge the write. If fewer do, the
   * acquisition is undone and fails with QuorumError (`needed` = waitReplicas, `got` = acknowledgements).
   * Single Redis only. Default 0: no WAIT.
   */
  waitReplicas?: number;
  /** How long WAIT may block, capped at half the lease so most of it is left to the holder. Default 1000. */
  waitReplicasTimeoutMs?: number;
}

/** Wraps the Redis backend when `waitReplicas` is set; validates the options either way. */
export function withReplicaAck(
  backend: LockBackend,
  redis: Redis | Cluster,
  o: ReplicaAckOptions,
): LockBackend {
  const replicas = checkCount("waitReplicas", o.waitReplicas ?? 0, 0);
  const timeoutMs = checkMs("waitReplicasTimeoutMs", o.waitReplicasTimeoutMs ?? 1_000, 1);
  if (replicas === 0) return backend;
  if ((redis as { isCluster?: boolean }).isCluster === true) {
    // WAIT counts the writes of its own connection; on a Cluster that is the slot's master, not any node.
    throw new InvalidOptionError("waitReplicas", replicas, "0 with a Cluster (WAIT needs a single Redis)");
  }
  const node = redis as Redis;
  // WAIT counts the writes of its own connection. If the connection was replaced between the acquire and the
  // WAIT (ioredis queues the WAIT and sends it on the new one, perhaps to a promoted replica), WAIT answers
  // for a connection that wrote nothing and proves nothing about the grant: such an answer counts as none.
  let closes = 0;
  const onClose = () => {
    closes++;
  };
  node.on("close", onClose);
  return {
    ...backend,
    async close() {
      node.off("close", onClose);
      await backend.close();
    },
    // Every grant must pass WAIT here, and a handoff grants inside the holder's release: waiters poll instead.
    handsOver: false,
    // `join` reaches only a store that queues without handing over (a semaphore); the mutex gets none here.
    async acquire(resource, key, owner, leaseMs, moreWaiters, reads, join) {
      const closesBefore = closes;
      const r = await backend.acquire(resource, key, owner, leaseMs, moreWaiters, reads, join);
      if (r[0] !== 1) return r;
      let acked = 0;
      let cause: unknown;
      try {
        // Same connection as the acquire script, so WAIT waits for exactly that write (or a later one).
        const ms = Math.max(1, Math.min(timeoutMs, Math.floor(leaseMs / 2)));
        acked = Number(await node.call("WAIT", replicas, ms));
        if (closes !== closesBefore) {
          cause = new Error(
            "the connection was replaced between the acquire and WAIT: its answer proves nothing",
          );
          acked = 0;
        }
      } catch (err) {
        cause = err;
      }
      if (acked >= replicas) return r;
      // Undo this acquisition only: a re-entry is decremented, a fresh lock deleted.
      await backend.release(resource, key, owner, leaseMs, r[2] ?? null).catch(() => {});
      throw new QuorumError(replicas, acked, {
        cause: cause ?? new Error(`WAIT ${replicas}: only ${acked} replica(s) acknowledged the lock`),
      });
    },
  };
}
