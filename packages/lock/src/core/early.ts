import type { Clock, Timer } from "./clock.js";

/**
 * A local handoff made as the release that makes it is sent, before the store's answer
 * (CommonLocksOptions.localHandoff). It is made only when that answer is certain: the releasing hold was live
 * under its own owner name with a known token, and the release forces the grant to stay in this process. The
 * store then keeps the lock in this process at least until the releasing hold's deadline, whichever way the
 * release goes, so the new holder borrows that deadline until the answer says the release granted it.
 */
export class EarlyGrant {
  /** True when the store granted the lock as sent (with this token); false when it did not, or no answer came. */
  readonly answer: Promise<boolean>;
  private settle!: (granted: boolean) => void;
  /** Sends the release that makes this grant now, when it was put off (LocksCore.sendAfterIo). */
  private sendNow: (() => void) | undefined;

  constructor(
    /** The releasing hold's token + 1: what the store gives a grant it keeps in the releasing process. */
    readonly token: number,
    /** The releasing hold's local deadline. */
    readonly until: number,
    /** The releasing hold's owner name: the store names it until the release runs. */
    readonly from: string,
  ) {
    this.answer = new Promise((resolve) => {
      this.settle = resolve;
    });
  }

  answered(granted: boolean): void {
    this.settle(granted);
  }

  /** The release that makes this grant is put off; `send` makes it at once. */
  deferred(send: () => void): void {
    this.sendNow = send;
  }

  /**
   * The new holder needs the answer (its own release or renewal waits for it): a release put off until the
   * I/O that follows goes now. A holder that releases without any I/O would else wait for the put-off bound.
   */
  hurry(): void {
    const send = this.sendNow;
    this.sendNow = undefined;
    send?.();
  }
}

/**
 * Early grants whose releases are not answered yet, by lock key and new owner, for every Locks of this process.
 * Redis names the new owner only once that release runs, so what checks that owner in Redis must wait for it:
 * a re-entry (LocksCore) and a fencedRead, which is given the lock's key and owner, not its Locks. Owner names
 * carry 128 random bits, so no two Locks share an entry unless a caller passes one Locks' owner to another.
 */
const unanswered = new Map<string, EarlyGrant>();

/** Tracks an early grant of `key` to `owner` until its release is answered. */
export function trackUntilAnswered(key: string, owner: string, grant: EarlyGrant): void {
  const id = `${key}\n${owner}`;
  unanswered.set(id, grant);
  void grant.answer.then(() => {
    if (unanswered.get(id) === grant) unanswered.delete(id);
  });
}

/**
 * Drops every tracked grant: for the deterministic simulation, whose seeds run one after another in one process
 * and may end with a release never answered (its world simply stops). Its entry would keep that world alive.
 */
export function forgetUnansweredGrants(): void {
  unanswered.clear();
}

/** The early grant of `key` to `owner` whose release is not answered yet, if any. */
export function unansweredGrant(key: string, owner: string): EarlyGrant | undefined {
  return unanswered.get(`${key}\n${owner}`);
}

/**
 * Resolves once Redis names `owner` in `key` as far as an early grant goes: at once unless a grant to it is
 * unanswered, else when its release (sent now if put off) is answered, whichever way.
 */
export async function namedInStore(key: string, owner: string): Promise<void> {
  const grant = unansweredGrant(key, owner);
  if (!grant) return;
  grant.hurry();
  await grant.answer;
}

/**
 * Less than this left of the releasing hold's lease and no early grant: its answer is a round trip away, and a
 * borrowed deadline that ran out first would lose the new hold for nothing.
 */
export const EARLY_MIN_MS = 50;

/**
 * Waits for an early grant's answer, at most `ms` (none: unbounded, as a store's reply is) and until `signal`
 * aborts (then rejects with its reason).
 */
export function awaitAnswer(
  clock: Clock,
  answer: Promise<boolean>,
  ms: number | undefined,
  signal: AbortSignal | undefined,
): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    let timer: Timer | undefined;
    const end = () => {
      if (timer !== undefined) clock.clearTimer(timer);
      signal?.removeEventListener("abort", onAbort);
    };
    const onAbort = () => {
      end();
      reject(signal!.reason);
    };
    if (ms !== undefined)
      timer = clock.setTimer(() => {
        end();
        resolve();
      }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
    void answer.then(() => {
      end();
      resolve();
    });
  });
}
