import type { ReleaseReply } from "../core/backend.js";
import { QuorumError } from "../errors.js";
import { releaseChannel } from "../resource.js";
import type { NodeReleases } from "./node-releases.js";
import type { RedlockSettings } from "./settings.js";
import { firstError, settleAll } from "./settle.js";

/**
 * Answers only with a quorum of nodes: `released` if any of them deleted the lock, else `not-owner`. (A node
 * holds each owner once, so no node answers "decremented": re-entry is counted in the process, holds.ts.)
 * With fewer nodes answering it rejects with QuorumError (`got` = nodes that answered), even when those said
 * released: the lock may still be held on the others and block everyone until its lease runs out. Either
 * way, nodes that did not answer (their client refused to send it, or the connection was lost or timed out
 * after it was sent) get it again in the background until one answers or the lease would have ended
 * (NodeReleases).
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
    s.clients.map((_, i) =>
      releases.send(i, { key: req.key, channel, owner: req.owner, leaseMs: req.leaseMs, until }),
    ),
    s.nodeTimeoutMs,
  );
  let released = 0;
  let answered = 0;
  for (const a of answers) {
    if (!a.ok) continue;
    answered++;
    if (a.value[0] === 2) released++;
  }
  if (answered < s.quorum) throw new QuorumError(s.quorum, answered, { cause: firstError(answers) });
  return released > 0 ? [2] : [0];
}
