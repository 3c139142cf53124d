import { isSerializationFailure } from "./connection-error.js";

/** How often one statement is sent in all before its serialization failure is passed on. */
const SERIALIZATION_ATTEMPTS = 4;

/**
 * Runs one autocommit statement, again at once while the server refuses it with a serialization failure or
 * deadlock: it ran nothing, so sending it again is safe. Without this a release under REPEATABLE READ rejected
 * whenever a waiter marked the row during it, and a refused acquire waited a retry interval.
 */
export async function runAgainOnConflict<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (err) {
      if (attempt >= SERIALIZATION_ATTEMPTS || !isSerializationFailure(err)) throw err;
    }
  }
}
