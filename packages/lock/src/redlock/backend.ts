import type { LockBackend, ReleaseReply, RenewItem } from "../core/backend.js";
import { LockLostError } from "../errors.js";
import { withScripts } from "../redis/scripts/index.js";
import { acquireOnQuorum } from "./acquire.js";
import { LocalHolds } from "./holds.js";
import { listRedlock } from "./list.js";
import { NodeReleases } from "./node-releases.js";
import { releaseOnQuorum } from "./release.js";
import { renewOnQuorum } from "./renew.js";
import { driftMs, type RedlockSettings } from "./settings.js";
import { createRedlockSubscriber } from "./subscriber.js";

export type { RedlockSettings } from "./settings.js";

/**
 * Redlock (antirez's algorithm) over independent Redis nodes. Every operation runs on all nodes in
 * parallel and counts as done only with a quorum of answers (acquire.ts, renew.ts, release.ts); acquiring
 * also requires the validity `lease - elapsed - drift` to be positive, where drift = lease * driftFactor + 2 ms.
 * Re-entry is counted in the process (holds.ts): a node holds each owner once.
 */
export function createRedlockBackend(s: RedlockSettings): LockBackend {
  const nodes = s.clients.map(withScripts);
  const releases = new NodeReleases(s.clients, s.clock, s.random);
  const holds = new LocalHolds(s.clock);
  const validUntil = (start: number, leaseMs: number) => start + leaseMs - driftMs(s, leaseMs);
  async function releaseHold(
    resource: string,
    key: string,
    owner: string,
    leaseMs: number,
  ): Promise<ReleaseReply> {
    const { left, lost } = holds.leave(key, owner);
    if (left > 0) return lost ? [0] : [1, left];
    const reply = await releaseOnQuorum(s, releases, { resource, key, owner, leaseMs });
    return lost ? [0] : reply;
  }
  /** Takes back a re-entry counted before its renewal failed (the last hold releases the key on the nodes). */
  const giveBack = (resource: string, key: string, owner: string, leaseMs: number) =>
    releaseHold(resource, key, owner, leaseMs).catch(() => {});
  return {
    async acquire(resource, key, owner, leaseMs, moreWaiters) {
      const entry = holds.entry(key, owner);
      if (entry.kind === "lost") throw new LockLostError(resource, owner, entry.reason);
      const start = s.clock.now();
      if (entry.kind === "held") {
        // A re-entry: the nodes hold the owner once; it only makes sure a quorum keeps the key this long.
        const count = holds.enter(key, owner);
        const calls = nodes.map((c) => c.lockyardRenew(key, owner, leaseMs).then((v) => [v]));
        let renewed: boolean | undefined;
        try {
          [renewed] = await renewOnQuorum(s, calls, 1);
        } catch (err) {
          await giveBack(resource, key, owner, leaseMs);
          throw err;
        }
        holds.renewed(key, owner, renewed === true, validUntil(start, leaseMs));
        if (renewed) return [1, count, null];
        await giveBack(resource, key, owner, leaseMs);
        throw new LockLostError(resource, owner, "renew-refused");
      }
      const reply = await acquireOnQuorum(s, releases, { resource, key, owner, leaseMs, moreWaiters });
      if (reply[0] === 1) return [1, holds.granted(key, owner, validUntil(start, leaseMs)), null];
      return reply;
    },

    async renew(key, owner, leaseMs) {
      const start = s.clock.now();
      const calls = nodes.map((c) => c.lockyardRenew(key, owner, leaseMs).then((v) => [v]));
      const [verdict] = await renewOnQuorum(s, calls, 1);
      if (verdict !== undefined) holds.renewed(key, owner, verdict, validUntil(start, leaseMs));
      return verdict!;
    },

    async renewMany(items: readonly RenewItem[]) {
      const start = s.clock.now();
      const args: (string | number)[] = new Array(items.length * 3);
      items.forEach((it, i) => {
        args[i] = it.key;
        args[items.length + 2 * i] = it.owner;
        args[items.length + 2 * i + 1] = it.leaseMs;
      });
      // A node answers for the whole batch or not at all, yet each lock is decided on its own: a refusal
      // by a quorum is returned at once, and a lock still undecided is undefined (the watchdog retries it
      // soon, and its local deadline decides). QuorumError only when no lock is decided.
      const verdicts = await renewOnQuorum(
        s,
        nodes.map((c) => c.lockyardRenewMany(items.length, ...args)),
        items.length,
      );
      items.forEach((it, i) => {
        const v = verdicts[i];
        if (v !== undefined) holds.renewed(it.key, it.owner, v, validUntil(start, it.leaseMs));
      });
      return verdicts;
    },

    release: releaseHold,

    async list(match, count, limit) {
      const infos = await listRedlock(s.clock, s.clients, s.quorum, s.prefix, match, count, limit);
      // The nodes hold each owner once; an owner of this process shows its re-entry count from here.
      for (const info of infos)
        for (const o of info.owners) o.count = Math.max(o.count, holds.count(info.key, o.owner));
      return infos;
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
