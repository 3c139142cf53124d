import type { Redis } from "ioredis";
import type { AcquireReply, LockBackend, ReleaseReply, RenewItem } from "../core/backend.js";
import { QuorumError } from "../errors.js";
import { withScripts } from "../redis/scripts/index.js";
import { redlockAcquire } from "../redis/scripts/redlock-acquire.js";
import { releaseChannel } from "../resource.js";
import { listRedlock } from "./list.js";
import { NodeReleases } from "./release.js";
import { tallyRenewals } from "./renew.js";
import { callScript } from "./send.js";
import { firstError, settleAll } from "./settle.js";
import { createRedlockSubscriber } from "./subscriber.js";

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
  const nodes = s.clients.map(withScripts);
  const { quorum } = s;
  const drift = (leaseMs: number) => Math.floor(leaseMs * s.driftFactor) + 2;
  const releases = new NodeReleases(s.clients);

  /** Renewal verdicts of a batch; throws QuorumError when no lock at all is decided. */
  const renewals = async (calls: Promise<number[]>[], locks: number) => {
    const { verdicts, mostYes, error } = await tallyRenewals(calls, locks, quorum, s.nodeTimeoutMs);
    if (verdicts.every((v) => v === undefined)) throw new QuorumError(quorum, mostYes, { cause: error });
    return verdicts;
  };

  return {
    async acquire(resource, key, owner, leaseMs, moreWaiters): Promise<AcquireReply> {
      const start = performance.now();
      const more = moreWaiters ? "1" : "0";
      const calls = s.clients.map((c) =>
        callScript<[number, number]>(c, redlockAcquire, [key, owner, leaseMs, more]),
      );
      const answers = await settleAll(
        calls.map((c) => c.reply),
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
      // Undo the attempt on each node where it ran or may have run: a yes, or a call sent without a reply
      // (it may yet be applied; the undo follows it on the same connection). Never where the client refused
      // to send it: there the undo would take back an earlier hold of this owner (its outer re-entry).
      // A node still silent is undone once its call settles, in the background past nodeTimeoutMs.
      const channel = releaseChannel(resource, s.prefix);
      const until = start + leaseMs;
      const undos = calls.map((call, i) =>
        call.reply
          .then(
            ([got]) => got === 1,
            (err: unknown) => call.written && !isReplyError(err),
          )
          .then((ran) => (ran ? releases.send(i, key, channel, owner, leaseMs, until) : undefined)),
      );
      await settleAll(undos, s.nodeTimeoutMs);
      if (yes + no < quorum) throw new QuorumError(quorum, yes, { cause: firstError(answers) });
      // A split vote: every contender got some nodes and released them. Retrying at once would
      // likely split again, so contenders back off by a random moment and one of them goes first.
      if (yes > 0) await pause(Math.random() * Math.min(50, 2 * elapsed + 5));
      return [0, pttl === Number.POSITIVE_INFINITY ? 0 : pttl];
    },

    async renew(key, owner, leaseMs) {
      const calls = nodes.map((c) => c.lockyardRenew(key, owner, leaseMs).then((v) => [v]));
      const [verdict] = await renewals(calls, 1);
      return verdict!;
    },

    async renewMany(items: readonly RenewItem[]) {
      const args: (string | number)[] = new Array(items.length * 3);
      items.forEach((it, i) => {
        args[i] = it.key;
        args[items.length + 2 * i] = it.owner;
        args[items.length + 2 * i + 1] = it.leaseMs;
      });
      // A node answers for the whole batch or not at all, yet each lock is decided on its own: a refusal
      // by a quorum is returned at once, and a lock still undecided is undefined (the watchdog retries it
      // soon, and its local deadline decides). QuorumError only when no lock is decided.
      return renewals(
        nodes.map((c) => c.lockyardRenewMany(items.length, ...args)),
        items.length,
      );
    },

    /**
     * Answers only with a quorum of nodes: `decremented` if any of them still counts a re-entry, else
     * `released` if any deleted the lock, else `not-owner`. With fewer nodes answering it rejects with
     * QuorumError (`got` = nodes that answered), even when those said released: the lock may still be held
     * on the others and block everyone until its lease runs out. Either way, nodes whose client refused to
     * send the release (down or reconnecting) get it again in the background until the lease would have
     * ended (NodeReleases); a node that was sent it and did not answer is left to its lease.
     */
    async release(resource, key, owner, leaseMs): Promise<ReleaseReply> {
      const channel = releaseChannel(resource, s.prefix);
      const until = performance.now() + leaseMs;
      const answers = await settleAll(
        s.clients.map((_, i) => releases.send(i, key, channel, owner, leaseMs, until)),
        s.nodeTimeoutMs,
      );
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
      if (answered < quorum) throw new QuorumError(quorum, answered, { cause: firstError(answers) });
      // Any node still counting a re-entry means an outer handle of this owner still holds the lock.
      if (left > 0) return [1, left];
      return released > 0 ? [2] : [0];
    },

    list(match, count, limit) {
      return listRedlock(s.clients, quorum, s.prefix, match, count, limit);
    },

    createSubscriber(onRelease, onResubscribed) {
      return createRedlockSubscriber(s.clients, quorum, s.prefix, onRelease, onResubscribed);
    },

    async close() {
      releases.stop();
    },

    validityMarginMs: drift,
  };
}

/** An error reply: the node refused the script (OOM, BUSY, LOADING…) before its first write. */
function isReplyError(err: unknown): boolean {
  return err instanceof Error && err.name === "ReplyError";
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}
