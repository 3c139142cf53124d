/** Base class of every error this library throws on purpose. `name` is stable: branch on it or on `instanceof`. */
export class LockError extends Error {
  override name = "LockError";
}

/** A resource name that is not a string of 1–512 UTF-8 bytes without control characters. Raised before any Redis call. */
export class InvalidResourceError extends LockError {
  override name = "InvalidResourceError";
  constructor(readonly resource: unknown) {
    super(
      `invalid resource name ${safeString(resource)}: use a string of 1-512 UTF-8 bytes without control characters`,
    );
  }
}

/** An option with a wrong type or out of range (negative, NaN, too large…). Raised before any Redis call. */
export class InvalidOptionError extends LockError {
  override name = "InvalidOptionError";
  constructor(
    readonly option: string,
    readonly value: unknown,
    expected: string,
  ) {
    super(`invalid option ${option}=${safeString(value)}: expected ${expected}`);
  }
}

/** `acquire` waited `waitMs` without getting the lock. */
export class LockTimeoutError extends LockError {
  override name = "LockTimeoutError";
  constructor(
    readonly resource: string,
    readonly waitedMs: number,
    readonly attempts: number,
    /** The store's error when it refused the last attempt without running it (see LockBackend.refused). */
    refusal?: unknown,
  ) {
    super(
      `timed out after ${Math.round(waitedMs)} ms (${attempts} attempts) waiting for lock "${resource}"` +
        (refusal === undefined
          ? ""
          : `; the store refused the last attempt without running it: ${messageOf(refusal)}`),
      refusal === undefined ? undefined : { cause: refusal },
    );
  }
}

function messageOf(err: unknown): string {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  const text = typeof message === "string" ? message : String(err);
  return typeof code === "string" ? `${text} (${code})` : text;
}

/** renew-refused: a renewal answered 0 (key deleted or taken); deadline: no renewal succeeded in time;
 * expired: a lock taken with an explicit `leaseMs` (no watchdog) reached the end of its lease. */
/**
 * renew-refused: a renewal answered 0; deadline/expired: no renewal in time / a fixed lease ran out;
 * not-owner-at-release: the release found another owner (or none); handoff-refused: the release that handed
 * this process's lock to this holder early (CommonLocksOptions.localHandoff) did not grant it, or got no answer.
 */
export type LostReason =
  | "renew-refused"
  | "deadline"
  | "expired"
  | "not-owner-at-release"
  | "handoff-refused";

/** The lock was lost while held: a renewal answered 0, the key vanished, or the local deadline passed. */
export class LockLostError extends LockError {
  override name = "LockLostError";
  constructor(
    readonly resource: string,
    readonly owner: string,
    readonly reason: LostReason,
    options?: { cause?: unknown },
  ) {
    super(`lock "${resource}" was lost (${reason})`, options);
  }
}

/** The handle's owner no longer holds the lock. */
export class LockNotOwnedError extends LockError {
  override name = "LockNotOwnedError";
  constructor(
    readonly resource: string,
    readonly owner: string,
  ) {
    super(`lock "${resource}" is not held by ${owner}`);
  }
}

/** `release()` or `renew()` on a handle that was already released. No Redis call is made. */
export class LockReleasedError extends LockError {
  override name = "LockReleasedError";
  constructor(readonly resource: string) {
    super(`this handle of lock "${resource}" was already released`);
  }
}

/** Redlock could not reach a quorum of nodes. */
export class QuorumError extends LockError {
  override name = "QuorumError";
  constructor(
    readonly needed: number,
    readonly got: number,
    options?: { cause?: unknown },
  ) {
    super(`quorum not reached: ${got} of ${needed} needed`, options);
  }
}

/**
 * The connection to Redis closed after one of the library's scripts was sent and before Redis answered it: it may
 * have run. The library never sends it again (a second run could decrement a re-entered hold twice, or take a
 * fenced delta twice); what the core does about it is in its README ("a reply lost"). Redis was unreachable:
 * `isRedisUnavailable` is true for it.
 */
export class ReplyLostError extends LockError {
  override name = "ReplyLostError";
  constructor(readonly command: string) {
    super(
      `the connection to Redis closed before it answered ${command}, which may have run: it is not sent again, and its outcome is unknown`,
    );
  }
}

/** The `Locks` instance was closed. */
export class LocksClosedError extends LockError {
  override name = "LocksClosedError";
  constructor() {
    super("this Locks instance is closed");
  }
}

function safeString(v: unknown): string {
  try {
    return typeof v === "string" ? JSON.stringify(v).slice(0, 80) : String(v);
  } catch {
    return typeof v;
  }
}
