import { anyCause, SOCKET_CODES } from "../core/unreachable.js";

/**
 * SQLSTATEs the server sends instead of running the statement, or as it drops the session mid-statement
 * (which rolls the statement back): connection exceptions (class 08), admin or crash shutdown, starting up,
 * too many connections; and a statement it gave up on (rolled back): cancelled or past statement_timeout
 * (57014), past lock_timeout (55P03), a serialization failure or a deadlock (40001, 40P01). A release refused
 * so is retried in the background, not left to its lease.
 */
const UNAVAILABLE_STATES = /^(08...|57P0[123]|53300|57014|55P03|40001|40P01)$/;
/** Of those, the states of a statement the server ran and rolled back: cancelled, timed out, deadlocked. */
const ROLLED_BACK_STATES = /^(57014|55P03|40001|40P01)$/;
/** Of those, the ones PostgreSQL asks the client to run again: a serialization failure, a deadlock. */
const SERIALIZATION_STATES = /^(40001|40P01)$/;
/** node-postgres's and pg-pool's own messages for a call that got no answer from the server. */
const MESSAGES =
  /connection terminated|not queryable|query read timeout|timeout exceeded when trying to connect|timeout expired/i;

/**
 * True when PostgreSQL did not answer a statement: the socket closed or was refused (the statement may have
 * committed before its reply was lost), the pool could not connect, or the server refused or cut the session
 * while shutting down or starting. A SQL error (a missing table, a constraint) is the server's answer and is
 * not. What the core does with such a call (a release retried in the background, a grant nobody heard
 * released) is owner-checked, so it is harmless when the statement did run.
 */
export function isPgUnavailable(err: unknown): boolean {
  return anyCause(err, ({ code, message }) => {
    if (typeof code === "string" && (SOCKET_CODES.has(code) || UNAVAILABLE_STATES.test(code))) return true;
    return typeof message === "string" && MESSAGES.test(message);
  });
}

/** True when the server rolled the statement back (a lock or statement timeout, a cancel, a deadlock): it changed nothing. */
export function isRolledBack(err: unknown): boolean {
  return ROLLED_BACK_STATES.test(sqlState(err));
}

/**
 * A serialization failure or deadlock (40001, 40P01): the server rolled the statement back and, as PostgreSQL's
 * manual advises, it may simply be run again. Under REPEATABLE READ or SERIALIZABLE a lock's statement meets
 * one whenever another session changed the row after the statement's snapshot (a waiter marking it, a grant).
 */
export function isSerializationFailure(err: unknown): boolean {
  return SERIALIZATION_STATES.test(sqlState(err));
}

/** The SQLSTATE pg put on the error as `code`, "" when there is none. */
function sqlState(err: unknown): string {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" ? code : "";
}
