import { isRedisUnavailable } from "@lockyard/lock";
import { TRPCError } from "@trpc/server";

// Narrower than isRedisUnavailable (which also covers "sent, reply lost"): ioredis refused to send, nothing
// reached Redis, so the plain "try again" is the truth.
const NEVER_SENT = /Stream isn't writeable|enableOfflineQueue/;

/**
 * What a failed stock write means to the caller. When Redis went away with the write already sent, it
 * may have been applied: a 503 that says "try again" would invite a second decrement, so this one says
 * to read the stock first. Any other error is returned unchanged.
 */
export function writeFailure(error: unknown): unknown {
  if (!isRedisUnavailable(error) || (error instanceof Error && NEVER_SENT.test(error.message))) return error;
  return new TRPCError({
    code: "SERVICE_UNAVAILABLE",
    message:
      "Redis went away while the stock write was in flight, so it may have been applied: read stock.get before you retry",
    cause: error,
  });
}

/** Awaits a stock write, turning a lost reply into the error above. */
export async function stockWrite<T>(write: Promise<T>): Promise<T> {
  try {
    return await write;
  } catch (error) {
    throw writeFailure(error);
  }
}
