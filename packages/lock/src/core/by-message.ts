/**
 * Holding a lock handed over by another process from the handoff message alone, without the attempt that would
 * adopt it (one round trip, and a wake of this process, per handoff between processes).
 *
 * The store hands the lock to a queued waiter under a claim lease (`claimMs`, counted from when the handing
 * release ran) and announces `c:<owner> <token> <claimMs>`. The waiter may count on that claim only from a time it
 * knows the handoff ran after: a call of ours that the store ran while the waiter queued, and that answered the
 * last token issued then (its probe). Tokens only grow, so a handoff announced with a greater token ran after that
 * call, which ran after it was sent: the claim lasts at least until the probe's send time + claimMs. A message that
 * arrives late, after a refusal that saw the claim run out (and its token issued), fails that test and the waiter
 * looks as before.
 */

/**
 * A call the store ran while the waiter queued, and the last token the store had issued when it ran: a refused
 * attempt of the waiter's, or a release of ours that handed the lock elsewhere and queued the waiter.
 */
export interface Probe {
  /** Local time the call was sent: the store ran it after. */
  sentAt: number;
  fence: number;
}

export interface HandedMessage {
  owner: string;
  token: number;
  claimMs: number;
}

/**
 * The handoff a release message announces (`c:<owner> <token> <claimMs>`), or undefined for any other message. An
 * older version announced `h:<owner>`; read as a release, it makes the head look, which adopts the lock.
 */
export function parseHanded(message: string): HandedMessage | undefined {
  // Owner names have no spaces (instanceId cannot, owner.ts), so the two trailing numbers are never part of one.
  const m = /^c:(\S+) (\d+) (\d+)$/.exec(message);
  if (!m) return undefined;
  return { owner: m[1]!, token: Number(m[2]), claimMs: Number(m[3]) };
}

/** Until when the claim surely lasts, or undefined when the probe cannot show the handoff ran after it. */
export function claimedUntil(probe: Probe | undefined, token: number, claimMs: number): number | undefined {
  if (probe === undefined || probe.fence >= token) return undefined;
  return probe.sentAt + claimMs;
}
