import type { LockBackend, RenewItem } from "../core/backend.js";
import { withScripts } from "../redis/scripts/index.js";
import { acquireOnQuorum } from "./acquire.js";
import { listRedlock } from "./list.js";
import { NodeReleases, releaseOnQuorum } from "./release.js";
import { renewOnQuorum } from "./renew.js";
import { driftMs, type RedlockSettings } from "./settings.js";
import { createRedlockSubscriber } from "./subscriber.js";

export type { RedlockSettings } from "./settings.js";

/**
 * Redlock (antirez's algorithm) over independent Redis nodes. Every operation runs on all nodes in
 * parallel and counts as done only with a quorum of answers (acquire.ts, renew.ts, release.ts); acquiring
 * also requires the validity `lease - elapsed - drift` to be positive, where drift = lease * driftFactor + 2 ms.
 */
export function createRedlockBackend(s: RedlockSettings): LockBackend {
  const nodes = s.clients.map(withScripts);
  const releases = new NodeReleases(s.clients, s.clock, s.random);
  return {
    acquire: (resource, key, owner, leaseMs, moreWaiters) =>
      acquireOnQuorum(s, releases, { resource, key, owner, leaseMs, moreWaiters }),

    async renew(key, owner, leaseMs) {
      const calls = nodes.map((c) => c.lockyardRenew(key, owner, leaseMs).then((v) => [v]));
      const [verdict] = await renewOnQuorum(s, calls, 1);
      return verdict!;
    },

    renewMany(items: readonly RenewItem[]) {
      const args: (string | number)[] = new Array(items.length * 3);
      items.forEach((it, i) => {
        args[i] = it.key;
        args[items.length + 2 * i] = it.owner;
        args[items.length + 2 * i + 1] = it.leaseMs;
      });
      // A node answers for the whole batch or not at all, yet each lock is decided on its own: a refusal
      // by a quorum is returned at once, and a lock still undecided is undefined (the watchdog retries it
      // soon, and its local deadline decides). QuorumError only when no lock is decided.
      return renewOnQuorum(
        s,
        nodes.map((c) => c.lockyardRenewMany(items.length, ...args)),
        items.length,
      );
    },

    release: (resource, key, owner, leaseMs) =>
      releaseOnQuorum(s, releases, { resource, key, owner, leaseMs }),

    list(match, count, limit) {
      return listRedlock(s.clock, s.clients, s.quorum, s.prefix, match, count, limit);
    },

    createSubscriber(onRelease, onResubscribed) {
      return createRedlockSubscriber(s.clock, s.clients, s.quorum, s.prefix, onRelease, onResubscribed);
    },

    async close() {
      releases.stop();
    },

    validityMarginMs: (leaseMs) => driftMs(s, leaseMs),
  };
}
