import type { Faults } from "./backend.js";
import type { Rng } from "./rng.js";

/** Each run draws its own weather: some calm, some stormy (README: Faults). */
export function drawWeather(rng: Rng): { stormy: boolean; faults: Faults } {
  const stormy = rng.chance(0.5);
  const faults: Faults = {
    loseRequest: stormy ? 0.03 : 0,
    loseReply: stormy ? 0.03 : 0,
    delayMs: [1, 5],
    slow: stormy ? 0.05 : 0.01,
    slowMs: stormy ? 250 : 40,
    commandTimeoutMs: 300,
    reconnectMs: [20, 150],
  };
  return { stormy, faults };
}

/**
 * How long a free lock may stay unclaimed while a running process waits for it: one attempt's worst case (a
 * lost request times out, then a retry goes out and back through slow deliveries), plus the retry jitter.
 * Every miss of a release message (not yet subscribed, subscriber reconnected) is followed by a look, never
 * only by a fallback timer of the PTTL. `silentMs`: what a lock freed without a message adds (a key lost
 * early announces nothing: its waiters look when their fallback timer, up to a lease, fires).
 */
export const wakeBoundOf = (f: Faults, silentMs: number) => f.commandTimeoutMs + 3 * f.slowMs + 50 + silentMs;

/**
 * How long an acquire may take. With a wait, the caller's deadline bounds everything (an attempt in flight
 * included: defect 6); 10 ms covers the timer's own delivery. Without one (waitMs 0: one attempt), the
 * client's timeouts do.
 */
export const settleBoundOf = (f: Faults, waitMs: number) =>
  waitMs > 0 ? waitMs + 10 : f.commandTimeoutMs + 2 * f.slowMs + 10;

/**
 * I11 (a lock held by nobody): how long an owner with no handle, no early grant and no waiter may stay in Redis
 * while its process runs undisturbed (a give-up's release, or a give-back after the answer it waits for: a few
 * round trips of 1–5 ms), and how long after a lost call (the background release's gap, up to 250 ms, then its
 * round trip) or a slow delivery or pause the check waits before judging.
 */
export const ORPHAN = { boundMs: 100, lossGraceMs: 300, slowGraceMs: 50 } as const;
