import type { Granted, LoopHost, Request } from "./acquire-loop.js";
import type { AcquireReply } from "./backend.js";
import type { Deadline } from "./deadlines.js";

/** One acquire attempt as the loop sees it. */
export type Attempt =
  | { outcome: "granted"; reply: Granted }
  /** `fence`: the last token the store had issued when it refused (stores that hand over; see by-message.ts). */
  | {
      outcome: "held";
      pttl: number;
      fence: number | undefined;
      /** Set when the store refused the attempt without running it (LockBackend.refused): it marked nothing. */
      refusal?: unknown;
    }
  /** The caller's deadline passed, its signal aborted, or close() ran before the store answered. */
  | { outcome: "gave-up"; reason: GaveUpReason };

export type GaveUpReason = "deadline" | "aborted" | "closed";

/**
 * Sends one attempt and waits for its answer, but never past the caller's deadline or signal, nor past close():
 * a store that stalls (CLIENT PAUSE, a dead link without a timeout) must not stretch `waitMs`. An attempt that is
 * granted after the caller gave up is released at once, so no lock is left held for its lease by nobody; one that
 * was refused after it gave up may have queued the owner in the store, so it leaves the queue once Redis has run
 * it (a leave sent at once could reach Redis first wherever requests are not delivered in order).
 */
export function attemptWithin(
  host: LoopHost,
  q: Request,
  deadline: number,
  more: boolean,
  /** Join the store's waiter queue when refused, and adopt a lock handed to this owner (backend.ts). */
  join: boolean,
): Promise<Attempt> {
  const sent = host.backend.acquire(q.resource, q.key, q.owner, q.leaseMs, more, q.reads, join);
  sent.catch((err: unknown) => {
    if (!refusedUnrun(host, err)) host.attemptUnanswered(q, err);
  });
  const signal = q.signal;
  return new Promise<Attempt>((resolve, reject) => {
    let settled = false;
    const finish = () => {
      settled = true;
      host.deadlines.delete(entry);
      signal?.removeEventListener("abort", onAbort);
    };
    const giveUp = (reason: GaveUpReason) => {
      if (settled) return;
      finish();
      sent.then(
        (r) => {
          if (r[0] === 1) host.releaseOrphan(q, r);
          else if (join) host.leaveQueue(q);
        },
        (err: unknown) => {
          if (join && mayHaveRun(host, err)) host.leaveQueue(q);
        },
      );
      resolve({ outcome: "gave-up", reason });
    };
    const onAbort = () => giveUp("aborted");
    // Also without a deadline: close() ends every attempt in flight (a stalled store must not hold it).
    const entry: Deadline = { at: deadline, expire: (closed) => giveUp(closed ? "closed" : "deadline") };
    if (signal?.aborted) return giveUp("aborted");
    host.deadlines.add(entry);
    signal?.addEventListener("abort", onAbort, { once: true });
    sent.then(
      (r) => {
        if (settled) return;
        finish();
        try {
          resolve(checked(host, q, r));
        } catch (err) {
          reject(err);
        }
      },
      (err: unknown) => {
        if (settled) return;
        finish();
        // tryAcquire has no wait to retry in: it reports the store's error, as it does any other.
        if (!q.once && refusedUnrun(host, err)) {
          resolve({ outcome: "held", pttl: REFUSED_PTTL, fence: undefined, refusal: err });
        } else reject(err);
      },
    );
  });
}

/** A refusal tells no lease: the waiter looks again on its longest retry interval (a store that timed out
 * statements is busy; looking sooner would add to that). */
const REFUSED_PTTL = -1;

/** The store refused the call without running it: nothing to undo, and a waiting acquire may try again. */
export function refusedUnrun(host: LoopHost, err: unknown): boolean {
  return host.backend.refused?.(err) === true;
}

/** The call got no answer and may have run unheard (a refusal that ran nothing is not such a call). */
export function mayHaveRun(host: LoopHost, err: unknown): boolean {
  return host.backend.noReply?.(err) === true && !refusedUnrun(host, err);
}

/** A broken `reads` ends the acquire with its error, and a grant it came with is released. */
function checked(host: LoopHost, q: Request, r: AcquireReply): Attempt {
  const error = q.readsFailure?.error;
  if (error === undefined) return toAttempt(r);
  if (r[0] === 1) host.releaseOrphan(q, r);
  throw error;
}

function toAttempt(r: AcquireReply): Attempt {
  return r[0] === 1 ? { outcome: "granted", reply: r } : { outcome: "held", pttl: r[1], fence: r[2] };
}
