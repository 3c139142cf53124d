import type { AcquireReply } from "../core/backend.js";
import { QuorumError } from "../errors.js";
import { redlockAcquire } from "../redis/scripts/redlock-acquire.js";
import { releaseChannel } from "../resource.js";
import type { NodeReleases } from "./node-releases.js";
import type { NodeCall } from "./send.js";
import { callScript } from "./send.js";
import { driftMs, type RedlockSettings } from "./settings.js";
import { firstError, type NodeAnswer, settleAll } from "./settle.js";

type NodeAcquireReply = [number, number];

export interface AcquireRequest {
  resource: string;
  key: string;
  owner: string;
  leaseMs: number;
  moreWaiters: boolean;
}

/**
 * One attempt on every node in parallel. Granted with a quorum of yes and a positive validity
 * `lease - elapsed - drift`; otherwise the attempt is undone where it ran, and the reply is "held"
 * (or QuorumError when too few nodes answered at all).
 */
export async function acquireOnQuorum(
  s: RedlockSettings,
  releases: NodeReleases,
  req: AcquireRequest,
): Promise<AcquireReply> {
  const { key, owner, leaseMs } = req;
  const start = s.clock.now();
  releases.supersede(key, owner);
  const more = req.moreWaiters ? "1" : "0";
  const calls = s.clients.map((c) =>
    callScript<NodeAcquireReply>(c, redlockAcquire, [key, owner, leaseMs, more]),
  );
  const answers = await settleAll(
    s.clock,
    calls.map((c) => c.reply),
    Math.min(s.nodeTimeoutMs, leaseMs),
  );
  const elapsed = s.clock.now() - start;
  const { yes, no, count, pttl } = countVotes(answers);
  if (yes >= s.quorum && leaseMs - elapsed - driftMs(s, leaseMs) > 0) return [1, count, null];
  await undoAttempt(s, releases, req, calls, start + leaseMs);
  if (yes + no < s.quorum) throw new QuorumError(s.quorum, yes, { cause: firstError(answers) });
  // A split vote: every contender got some nodes and released them. Retrying at once would
  // likely split again, so contenders back off by a random moment and one of them goes first.
  if (yes > 0) await pause(s, s.random() * Math.min(50, 2 * elapsed + 5));
  return [0, pttl === Number.POSITIVE_INFINITY ? 0 : pttl];
}

/** Nodes that granted (and the highest re-entry count) and that refused (and the lowest pttl they saw). */
function countVotes(answers: NodeAnswer<NodeAcquireReply>[]) {
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
  return { yes, no, count, pttl };
}

/**
 * Undoes the attempt on each node where it ran or may have run: a yes, or a call sent without a reply
 * (it may yet be applied; the undo follows it on the same connection). Never where the client refused
 * to send it: there the undo would take back an earlier hold of this owner (its outer re-entry).
 * A node still silent is undone once its call settles, in the background past nodeTimeoutMs, unless the
 * owner's next attempt has begun by then (node-releases.ts).
 */
async function undoAttempt(
  s: RedlockSettings,
  releases: NodeReleases,
  req: AcquireRequest,
  calls: NodeCall<NodeAcquireReply>[],
  until: number,
): Promise<void> {
  const channel = releaseChannel(req.resource, s.prefix);
  const undos = calls.map((call, i) => {
    // Taken now, so a later attempt by this owner drops the undo if it would only be sent after that began.
    const ticket = releases.ticket(req.key, req.owner);
    return call.reply
      .then(
        ([got]) => got === 1,
        (err: unknown) => call.written && !isReplyError(err),
      )
      .then((ran) => {
        if (ran) return releases.send(i, req.key, channel, req.owner, req.leaseMs, until, ticket);
        ticket.done();
        return undefined;
      });
  });
  await settleAll(s.clock, undos, s.nodeTimeoutMs);
}

/** An error reply: the node refused the script (OOM, BUSY, LOADING…) before its first write. */
function isReplyError(err: unknown): boolean {
  return err instanceof Error && err.name === "ReplyError";
}

function pause(s: RedlockSettings, ms: number): Promise<void> {
  return new Promise((resolve) => s.clock.setTimer(resolve, ms));
}
