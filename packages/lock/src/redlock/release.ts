import type { Redis } from "ioredis";
import { redlockRelease } from "../redis/scripts/redlock-release.js";
import { callScript } from "./send.js";

export type NodeReleaseReply = [number, number];

/**
 * Releases on single nodes. A release that a node's client refused before sending it (the client was down
 * or reconnecting) cannot have run there, so it is sent again in the background, about every lease/10 (at
 * most 200 ms), until it is sent or until `until`, when the node frees the lock on its own. A release that
 * was sent and got no reply is not sent again: it may have run, and a second run of a decrement would take
 * one more hold than the caller gave back. One unref'd timer per pending retry, all cleared by stop().
 */
export class NodeReleases {
  private readonly timers = new Set<NodeJS.Timeout>();
  private stopped = false;

  constructor(private readonly nodes: readonly Redis[]) {}

  /** Sends the release to node `i`; the promise is the first attempt's reply. */
  send(i: number, key: string, channel: string, owner: string, leaseMs: number, until: number) {
    const call = callScript<NodeReleaseReply>(this.nodes[i]!, redlockRelease, [key, channel, owner, leaseMs]);
    call.reply.catch(() => {
      if (!call.written) this.later(() => this.send(i, key, channel, owner, leaseMs, until), leaseMs, until);
    });
    return call.reply;
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
  }

  private later(retry: () => void, leaseMs: number, until: number): void {
    if (this.stopped) return;
    const gap = Math.min(200, leaseMs / 10) * (0.75 + Math.random() * 0.5);
    if (performance.now() + gap >= until) return;
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (!this.stopped) retry();
    }, gap);
    t.unref();
    this.timers.add(t);
  }
}
