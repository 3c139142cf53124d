import type { AcquireReply } from "../core/backend.js";
import { QuorumError } from "../errors.js";
import { redlockAcquire } from "../redis/scripts/redlock-acquire.js";
import { releaseChannel } from "../resource.js";
import type { NodeReleases } from "./node-releases.js";
import type { NodeCall } from "./send.js";
import { callScript } from "./send.js";
import { driftMs, type RedlockSettings } from "./settings.js";
import { firstError, type NodeAnswer, settleAll } from "./settle.js";

/** [1, count] granted, [0, pttl, holder] refused (holder: the owner the node holds it for). */
type NodeAcquireReply = [number, number, string?];

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
  const { yes, no, count, pttl, heldByQuorum } = countVotes(answers, s.quorum);
  if (yes >= s.quorum && leaseMs - elapsed - driftMs(s, leaseMs) > 0) return [1, count, null];
  // Refused by one owner's quorum, the nodes this attempt took were free only because that holder's hold
  // skipped them (a node restarted, or lost a race): undoing them frees no lock. Announced, the undo would
  // wake the waiters, one of which retakes those nodes, is refused and undoes them in turn, every few ms for as
  // long as the holder holds. The holder's own release, on the nodes it holds, is what wakes them.
  await undoAttempt(s, releases, req, calls, { until: start + leaseMs, announce: !heldByQuorum });
  if (yes + no < s.quorum) throw new QuorumError(s.quorum, yes + no, { cause: firstError(answers) });
  // A split vote: every contender got some nodes and released them. Retrying at once would
  // likely split again, so contenders back off by a random moment and one of them goes first.
  if (yes > 0) await pause(s, s.random() * Math.min(50, 2 * elapsed + 5));
  return [0, pttl === Number.POSITIVE_INFINITY ? 0 : pttl];
}

/**
 * Nodes that granted (and the highest re-entry count) and that refused (and the lowest pttl they saw), and
 * whether one other owner holds a quorum of the nodes.
 */
function countVotes(answers: NodeAnswer<NodeAcquireReply>[], quorum: number) {
  let yes = 0;
  let no = 0;
  let count = 0;
  let pttl = Number.POSITIVE_INFINITY;
  const refusalsBy = new Map<string, number>();
  for (const a of answers) {
    if (!a.ok) continue;
    const [got, v, holder = ""] = a.value;
    if (got === 1) {
      yes++;
      if (v > count) count = v;
    } else {
      no++;
      if (v >= 0 && v < pttl) pttl = v;
      refusalsBy.set(holder, (refusalsBy.get(holder) ?? 0) + 1);
    }
  }
  refusalsBy.delete("");
  const heldByQuorum = [...refusalsBy.values()].some((n) => n >= quorum);
  return { yes, no, count, pttl, heldByQuorum };
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
  { until, announce }: { until: number; announce: boolean },
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
        const rel = { key: req.key, channel, owner: req.owner, leaseMs: req.leaseMs, until, announce };
        if (ran) return releases.send(i, rel, ticket);
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
