import { type Clock, realClock } from "./core/clock.js";
import { InvalidOptionError } from "./errors.js";
import type { LockEvent } from "./events.js";
import { checkCount, checkKnownKeys, checkMs, checkString, MIN_LEASE_MS } from "./options.js";
import { defaultInstanceId } from "./owner.js";
import { checkPrefix, DEFAULT_PREFIX } from "./resource.js";
import type { CommonLocksOptions, HandoffAdoption, LocalHandoff, RetryOptions } from "./types.js";

export interface Config {
  prefix: string;
  leaseMs: number;
  waitMs: number;
  retryMinMs: number;
  retryMaxMs: number;
  jitterMs: number;
  /** See RetryOptions.queueLeaseMs: a queued waiter looks again at least every third of it. */
  queueLeaseMs: number;
  /** See CommonLocksOptions.localStreak and localStreakMs. */
  localStreak: number;
  localStreakMs: number;
  /** See CommonLocksOptions.localHandoff. */
  localHandoff: LocalHandoff;
  /** See CommonLocksOptions.handoffAdoption. */
  handoffAdoption: HandoffAdoption;
  instanceId: string;
  emit: ((e: LockEvent) => void) | undefined;
  /** Time and timers: real unless the deterministic simulation passes its own. */
  clock: Clock;
  /** Jitter source: Math.random unless the simulation passes a seeded one. */
  random: () => number;
}

/** Time and randomness for the core; tests of the core swap both for deterministic ones. */
export interface Runtime {
  clock: Clock;
  random: () => number;
}

const realRuntime: Runtime = { clock: realClock, random: Math.random };

const COMMON_KEYS = [
  "prefix",
  "leaseMs",
  "waitMs",
  "retry",
  "localStreak",
  "localStreakMs",
  "localHandoff",
  "handoffAdoption",
  "instanceId",
  "onEvent",
] as const satisfies readonly (keyof CommonLocksOptions)[];
const RETRY_KEYS: ReadonlySet<string> = new Set([
  "minMs",
  "maxMs",
  "jitterMs",
  "queueLeaseMs",
] satisfies (keyof RetryOptions)[]);

/**
 * Validates createLocks options once, so the hot path trusts them. `storeKeys`: the options of the store's own
 * create function (`redis`, `pool`, …); any other name is refused.
 */
export function parseConfig(
  o: CommonLocksOptions,
  runtime: Runtime = realRuntime,
  storeKeys: readonly string[] = [],
): Config {
  checkKnownKeys(o, new Set([...COMMON_KEYS, ...storeKeys]));
  const retry = o.retry ?? {};
  if (typeof retry !== "object" || retry === null) throw new InvalidOptionError("retry", retry, "an object");
  checkKnownKeys(retry, RETRY_KEYS, "retry.");
  const onEvent = o.onEvent;
  if (onEvent !== undefined && typeof onEvent !== "function") {
    throw new InvalidOptionError("onEvent", onEvent, "a function");
  }
  const retryMinMs = checkMs("retry.minMs", retry.minMs ?? 5, 0);
  const retryMaxMs = checkMs("retry.maxMs", retry.maxMs ?? 500, 1);
  if (retryMinMs > retryMaxMs) throw new InvalidOptionError("retry.minMs", retryMinMs, "at most retry.maxMs");
  const jitterMs = checkMs("retry.jitterMs", retry.jitterMs ?? 20, 0);
  return {
    prefix: checkPrefix(o.prefix ?? DEFAULT_PREFIX),
    leaseMs: checkMs("leaseMs", o.leaseMs ?? 30_000, MIN_LEASE_MS),
    waitMs: checkMs("waitMs", o.waitMs ?? 5_000, 0),
    retryMinMs,
    retryMaxMs,
    jitterMs,
    queueLeaseMs: checkMs("retry.queueLeaseMs", retry.queueLeaseMs ?? 3 * (retryMaxMs + jitterMs), 3),
    localStreak: checkCount("localStreak", o.localStreak ?? 4, 0),
    localStreakMs: checkMs("localStreakMs", o.localStreakMs ?? 20, 0),
    localHandoff: checkOneOf("localHandoff", o.localHandoff ?? "early", LOCAL_HANDOFFS),
    handoffAdoption: checkOneOf("handoffAdoption", o.handoffAdoption ?? "message", HANDOFF_ADOPTIONS),
    instanceId: checkString(
      "instanceId",
      o.instanceId ?? defaultInstanceId(),
      /^[^\s\p{Cc}\p{Cs}]{1,128}$/u,
      "1-128 characters, none of them a space, a control character or a lone surrogate",
    ),
    clock: runtime.clock,
    random: runtime.random,
    emit: onEvent
      ? (e) => {
          try {
            onEvent(e);
          } catch {
            // A listener's bug must not break locking.
          }
        }
      : undefined,
  };
}

const LOCAL_HANDOFFS: readonly LocalHandoff[] = ["early", "confirmed"];
const HANDOFF_ADOPTIONS: readonly HandoffAdoption[] = ["message", "attempt"];

function checkOneOf<T extends string>(name: string, value: unknown, allowed: readonly T[]): T {
  if (!allowed.includes(value as T))
    throw new InvalidOptionError(name, value, `one of ${allowed.map((v) => `"${v}"`).join(", ")}`);
  return value as T;
}
