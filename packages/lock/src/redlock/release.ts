import type { Redis } from "ioredis";
import type { ReleaseReply } from "../core/backend.js";
import type { Clock, Timer } from "../core/clock.js";
import { QuorumError } from "../errors.js";
import { redlockRelease } from "../redis/scripts/redlock-release.js";
import { releaseChannel } from "../resource.js";
import { callScript } from "./send.js";
import type { RedlockSettings } from "./settings.js";
import { firstError, settleAll } from "./settle.js";

export type NodeReleaseReply = [number, number];

/**
 * Answers only with a quorum of nodes: `decremented` if any of them still counts a re-entry, else
 * `released` if any deleted the lock, else `not-owner`. With fewer nodes answering it rejects with
 * QuorumError (`got` = nodes that answered), even when those said released: the lock may still be held
 * on the others and block everyone until its lease runs out. Either way, nodes whose client refused to
 * send the release (down or reconnecting) get it again in the background until the lease would have
 * ended (NodeReleases); a node that was sent it and did not answer is left to its lease.
 */
export async function releaseOnQuorum(
  s: RedlockSettings,
  releases: NodeReleases,
  req: { resource: string; key: string; owner: string; leaseMs: number },
): Promise<ReleaseReply> {
  const channel = releaseChannel(req.resource, s.prefix);
  const until = s.clock.now() + req.leaseMs;
  const answers = await settleAll(
    s.clock,
    s.clients.map((_, i) => releases.send(i, req.key, channel, req.owner, req.leaseMs, until)),
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
  if (answered < s.quorum) throw new QuorumError(s.quorum, answered, { cause: firstError(answers) });
  // Any node still counting a re-entry means an outer handle of this owner still holds the lock.
  if (left > 0) return [1, left];
  return released > 0 ? [2] : [0];
}

/**
 * Releases on single nodes. A release that a node's client refused before sending it (the client was down
 * or reconnecting) cannot have run there, so it is sent again in the background, about every lease/10 (at
 * most 200 ms), until it is sent or until `until`, when the node frees the lock on its own. A release that
 * was sent and got no reply is not sent again: it may have run, and a second run of a decrement would take
 * one more hold than the caller gave back. One unref'd timer per pending retry, all cleared by stop().
 */
export class NodeReleases {
  private readonly timers = new Set<Timer>();
  private stopped = false;

  constructor(
    private readonly nodes: readonly Redis[],
    private readonly clock: Clock,
    private readonly random: () => number,
  ) {}

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
    for (const t of this.timers) this.clock.clearTimer(t);
    this.timers.clear();
  }

  private later(retry: () => void, leaseMs: number, until: number): void {
    if (this.stopped) return;
    const gap = Math.min(200, leaseMs / 10) * (0.75 + this.random() * 0.5);
    if (this.clock.now() + gap >= until) return;
    const t = this.clock.setTimer(() => {
      this.timers.delete(t);
      if (!this.stopped) retry();
    }, gap);
    this.timers.add(t);
  }
}
