import type { Clock } from "../core/clock.js";
import type { LostReason } from "../errors.js";

/** `held`: a quorum held the key for the owner at the last grant or renewal. `lost`: a quorum no longer does. */
type HoldState = { kind: "held"; validUntil: number } | { kind: "lost"; reason: LostReason };

interface Hold {
  count: number;
  state: HoldState;
}

/** What an acquire by an owner finds here. */
export type Entry = { kind: "none" } | { kind: "held" } | { kind: "lost"; reason: LostReason };

/**
 * Re-entry of a Redlock hold is counted here, in the process, not on the nodes. A per-node count drifts:
 * a re-entry that reaches a quorum but not every node (one down, one held by another owner, one reply
 * lost) leaves the nodes with different counts, and releasing the inner hold then deletes the key on the
 * nodes that counted less, which can leave the outer hold on fewer than a quorum while it still reports
 * held (the simulation's --redlock mode found this). So a node holds each owner once: its scripts grant
 * and release idempotently, a re-entry only renews the key on a quorum (its TTL raised, never lowered) and
 * counts one more here, and only the last local release goes to the nodes.
 *
 * Once the owner's quorum hold is known gone (a quorum refused a renewal, or its validity ran out with no
 * renewal), the holds left here are lost: a re-entry is refused with LockLostError instead of granted
 * afresh, since the outer holds' releases would then delete the new grant under it.
 */
export class LocalHolds {
  private readonly holds = new Map<string, Hold>();

  constructor(private readonly clock: Clock) {}

  /** How many holds the owner has of `key` here (0 when none): what list() shows as its count. */
  count(key: string, owner: string): number {
    return this.holds.get(idOf(key, owner))?.count ?? 0;
  }

  /** What the owner holds of `key` here. */
  entry(key: string, owner: string): Entry {
    const h = this.holds.get(idOf(key, owner));
    if (!h) return { kind: "none" };
    if (h.state.kind === "held" && this.clock.now() >= h.state.validUntil)
      h.state = { kind: "lost", reason: "expired" };
    return h.state.kind === "held" ? { kind: "held" } : h.state;
  }

  /**
   * A re-entry of a held key, counted before its renewal is sent: a release of the outer hold meanwhile then
   * sees this hold and stays local. Undone with leave() if the renewal fails. Returns the new count.
   */
  enter(key: string, owner: string): number {
    const h = this.holds.get(idOf(key, owner));
    if (!h) return this.granted(key, owner, Number.NEGATIVE_INFINITY);
    h.count += 1;
    return h.count;
  }

  /** A quorum granted the key to the owner: one more hold; its new count. */
  granted(key: string, owner: string, validUntil: number): number {
    const id = idOf(key, owner);
    const h = this.holds.get(id);
    if (!h || h.state.kind === "lost") {
      this.holds.set(id, { count: (h?.count ?? 0) + 1, state: { kind: "held", validUntil } });
      return (h?.count ?? 0) + 1;
    }
    h.count += 1;
    h.state.validUntil = Math.max(h.state.validUntil, validUntil);
    return h.count;
  }

  /** A quorum renewed the key (true) or can no longer hold it (false). */
  renewed(key: string, owner: string, ok: boolean, validUntil: number): void {
    const h = this.holds.get(idOf(key, owner));
    if (!h) return;
    if (!ok) h.state = { kind: "lost", reason: "renew-refused" };
    else if (h.state.kind === "held") h.state.validUntil = Math.max(h.state.validUntil, validUntil);
  }

  /**
   * Gives one hold back. `left`: the holds the owner still has here (0: the release goes to the nodes);
   * `lost`: the owner's quorum hold was gone already.
   */
  leave(key: string, owner: string): { left: number; lost: boolean } {
    const id = idOf(key, owner);
    const h = this.holds.get(id);
    if (!h) return { left: 0, lost: false };
    const lost = h.state.kind === "lost";
    h.count -= 1;
    if (h.count <= 0) this.holds.delete(id);
    return { left: Math.max(0, h.count), lost };
  }
}

function idOf(key: string, owner: string): string {
  return `${key}\n${owner}`;
}
