import type { Redis } from "ioredis";
import type { Clock, Timer } from "../core/clock.js";
import { isConnectionError } from "../redis/connection-error.js";
import { redlockRelease } from "../redis/scripts/redlock-release.js";
import { callScript } from "./send.js";

export type NodeReleaseReply = [number, number];

/** What a release on one node frees, and until when it is worth sending (the lease ends then anyway). */
export interface NodeRelease {
  key: string;
  channel: string;
  owner: string;
  leaseMs: number;
  until: number;
  /** False for an undo that frees no lock (another owner holds a quorum): it wakes no waiter. Default true. */
  announce?: boolean;
}

/** One release still to be sent to one node; dead once a newer attempt by the same owner began. */
export interface ReleaseTicket {
  live(): boolean;
  done(): void;
}

interface Pending {
  /** Bumped by each new acquire attempt of the owner: tickets of an older epoch are not sent. */
  epoch: number;
  tickets: number;
}

/**
 * Releases on single nodes. A release that got no answer from its node (its client refused to send it while
 * down or reconnecting, or the connection was lost or timed out after it was sent) is sent again in the
 * background, about every lease/10 (at most 200 ms), until a node answers or until `until`, when the node
 * frees the lock on its own. Sending it again is safe: the script deletes only the owner's own key, a copy
 * still on its way runs before anything sent after it on that connection, and a newer attempt under the same
 * owner name drops the retry before it is sent (below). Before, a release sent and unanswered was left to the
 * lease: a network blip at release time held everyone up for a whole lease (the simulation's "held by
 * nobody" check, `--redlock --extra` seed 2149). A reply error (the node answered) is not retried. One unref'd
 * timer per pending retry, all cleared by stop().
 *
 * An acquire retries under the same owner name, so a release still waiting to be sent for an earlier
 * attempt (an undo of a split vote, sent once that attempt's silent node answers or its client reconnects)
 * would delete the grant of a later one. So each new attempt first `supersede`s the owner's waiting
 * releases: they are dropped. Dropping one leaves at most that node's old grant to the owner, which the new
 * attempt's own call (sent after it on the same connection) finds and counts as a yes, then keeps or undoes.
 */
export class NodeReleases {
  private readonly timers = new Set<Timer>();
  private readonly pending = new Map<string, Pending>();
  private stopped = false;

  constructor(
    private readonly nodes: readonly Redis[],
    private readonly clock: Clock,
    private readonly random: () => number,
  ) {}

  /** A new attempt by `owner` on `key`: releases of its earlier attempts not yet sent are dropped. */
  supersede(key: string, owner: string): void {
    const p = this.pending.get(idOf(key, owner));
    if (p) p.epoch++;
  }

  /** A release to be sent for the owner's current attempt; `done()` once it was sent or given up. */
  ticket(key: string, owner: string): ReleaseTicket {
    const id = idOf(key, owner);
    let p = this.pending.get(id);
    if (!p) {
      p = { epoch: 0, tickets: 0 };
      this.pending.set(id, p);
    }
    const entry = p;
    const epoch = entry.epoch;
    entry.tickets++;
    let open = true;
    return {
      live: () => entry.epoch === epoch,
      done: () => {
        if (!open) return;
        open = false;
        if (--entry.tickets === 0 && this.pending.get(id) === entry) this.pending.delete(id);
      },
    };
  }

  /** Sends the release to node `i`; the promise is the first attempt's reply ([0, 0] when superseded). */
  send(
    i: number,
    rel: NodeRelease,
    ticket: ReleaseTicket = this.ticket(rel.key, rel.owner),
  ): Promise<NodeReleaseReply> {
    if (!ticket.live()) {
      ticket.done();
      return Promise.resolve([0, 0]);
    }
    const { key, channel, owner, leaseMs, until, announce = true } = rel;
    const call = callScript<NodeReleaseReply>(this.nodes[i]!, redlockRelease, [
      key,
      channel,
      owner,
      leaseMs,
      announce ? "1" : "0",
    ]);
    call.reply.then(
      () => ticket.done(),
      (err: unknown) => {
        const retry = () => void this.send(i, rel, ticket).catch(() => {});
        const unanswered = !call.written || isConnectionError(err);
        if (!unanswered || !this.later(retry, leaseMs, until)) ticket.done();
      },
    );
    return call.reply;
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) this.clock.clearTimer(t);
    this.timers.clear();
  }

  /** Schedules a retry; false when there is none (stopped, or the lease ends first). */
  private later(retry: () => void, leaseMs: number, until: number): boolean {
    if (this.stopped) return false;
    const gap = Math.min(200, leaseMs / 10) * (0.75 + this.random() * 0.5);
    if (this.clock.now() + gap >= until) return false;
    const t = this.clock.setTimer(() => {
      this.timers.delete(t);
      if (!this.stopped) retry();
    }, gap);
    this.timers.add(t);
    return true;
  }
}

function idOf(key: string, owner: string): string {
  return `${key}\n${owner}`;
}
