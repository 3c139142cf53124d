import { createHmac, randomBytes } from "node:crypto";

/** Shared by every instrumented Locks of the process, so they hash a name alike. */
const processKey = randomBytes(32);

/**
 * A keyed hash, not a plain one: names like `user:alice@example.com` or `order:1001` are few enough that a
 * plain SHA-256 of them is reversed by hashing guesses. 128 bits of HMAC-SHA-256, as hex.
 */
export function keyedHash(key: string | undefined): (name: string) => string {
  const secret = key ?? processKey;
  return (name) => createHmac("sha256", secret).update(name).digest("hex").slice(0, 32);
}
