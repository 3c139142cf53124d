import type { Redis } from "ioredis";
import type { AcquireReply, LockBackend, ReleaseReply, RenewItem } from "./backend.js";
import { QuorumError } from "./errors.js";
import { listRedlock } from "./redlock-list.js";
import { withRedlockScripts } from "./redlock-scripts.js";
import { firstError, type NodeAnswer, settleAll } from "./redlock-settle.js";
import { createRedlockSubscriber } from "./redlock-subscriber.js";
import { releaseChannel } from "./resource.js";

export interface RedlockSettings {
  clients: readonly Redis[];
  quorum: number;
  driftFactor: number;
  /** The longest wait for one node's answer; a slower node counts as no answer. */
  nodeTimeoutMs: number;
  prefix: string;
}

/**
 * Redlock (antirez's algorithm) over independent Redis nodes. Every operation runs on all nodes in
 * parallel and counts as done only with a quorum of answers; acquiring also requires the validity
 * `lease - elapsed - drift` to be positive, where drift = lease * driftFactor + 2 ms.
 */
export function createRedlockBackend(s: RedlockSettings): LockBackend {
  const nodes = s.clients.map(withRedlockScripts);
  const n = nodes.length;
  const { quorum } = s;
  const drift = (leaseMs: number) => Math.floor(leaseMs * s.driftFactor) + 2;

  /** true: a quorum holds it; false: a quorum can no longer hold it; else too few nodes answered. */
  const verdict = (yes: number, no: number, answers: NodeAnswer<unknown>[]): boolean => {
    if (yes >= quorum) return true;
    if (no > n - quorum) return false;
    throw new QuorumError(quorum, yes, { cause: firstError(answers) });
  };

  const releaseAll = (key: string, channel: string, owner: string, leaseMs: number) =>
    settleAll(
      nodes.map((c) => c.lockyardRedlockRelease(key, channel, owner, leaseMs)),
      s.nodeTimeoutMs,
    );

  return {
    async acquire(resource, key, owner, leaseMs, moreWaiters): Promise<AcquireReply> {
      const start = performance.now();
      const more = moreWaiters ? "1" : "0";
      const answers = await settleAll(
        nodes.map((c) => c.lockyardRedlockAcquire(key, owner, leaseMs, more)),
        Math.min(s.nodeTimeoutMs, leaseMs),
      );
      const elapsed = performance.now() - start;
      let yes = 0;
      let no = 0;
      let count = 0;
      let pttl = Number.POSITIVE_INFINITY;
      for (const a of answers) {
        if (!a.ok) continue;
        const [got, v] = a.value;
        if (got === 1) {
          yes++;
          if (v > count) count = v;
        } else {
          no++;
          if (v >= 0 && v < pttl) pttl = v;
        }
      }
      if (yes >= quorum && leaseMs - elapsed - drift(leaseMs) > 0) return [1, count, null];
      // Undo everywhere, answered or not: a node that timed out may still have applied the acquire.
      await releaseAll(key, releaseChannel(resource), owner, leaseMs);
      if (yes + no < quorum) throw new QuorumError(quorum, yes, { cause: firstError(answers) });
      // A split vote: every contender got some nodes and released them. Retrying at once would
      // likely split again, so contenders back off by a random moment and one of them goes first.
      if (yes > 0) await pause(Math.random() * Math.min(50, 2 * elapsed + 5));
      return [0, pttl === Number.POSITIVE_INFINITY ? 0 : pttl];
    },

    async renew(key, owner, leaseMs) {
      const answers = await settleAll(
        nodes.map((c) => c.lockyardRenew(key, owner, leaseMs)),
        s.nodeTimeoutMs,
      );
      let yes = 0;
      let no = 0;
      for (const a of answers) if (a.ok) a.value === 1 ? yes++ : no++;
      return verdict(yes, no, answers);
    },

    async renewMany(items: readonly RenewItem[]) {
      const args: (string | number)[] = new Array(items.length * 3);
      items.forEach((it, i) => {
        args[i] = it.key;
        args[items.length + 2 * i] = it.owner;
        args[items.length + 2 * i + 1] = it.leaseMs;
      });
      const answers = await settleAll(
        nodes.map((c) => c.lockyardRenewMany(items.length, ...args)),
        s.nodeTimeoutMs,
      );
      // A node answers for the whole batch or not at all, so an undecided item means too few nodes
      // answered: throw, and the watchdog retries until the local deadline decides.
      return items.map((_, i) => {
        let yes = 0;
        let no = 0;
        for (const a of answers) if (a.ok) a.value[i] === 1 ? yes++ : no++;
        return verdict(yes, no, answers);
      });
    },

    async release(resource, key, owner, leaseMs): Promise<ReleaseReply> {
      const answers = await releaseAll(key, releaseChannel(resource), owner, leaseMs);
      let released = 0;
      let answered = 0;
      let left = 0;
      for (const a of answers) {
        if (!a.ok) continue;
        answered++;
        const [code, rest] = a.value;
        if (code === 2) released++;
        else if (code === 1 && rest > left) left = rest;
      }
      // Any node still counting a re-entry means an outer handle of this owner still holds the lock.
      if (left > 0) return [1, left];
      if (released > 0) return [2];
      if (answered < quorum) throw new QuorumError(quorum, answered, { cause: firstError(answers) });
      return [0];
    },

    list(match, count, limit) {
      return listRedlock(s.clients, quorum, s.prefix, match, count, limit);
    },

    createSubscriber(onRelease) {
      return createRedlockSubscriber(s.clients, quorum, onRelease);
    },

    async close() {},

    validityMarginMs: drift,
  };
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
