import type { AsyncLocalStorage } from "node:async_hooks";
import { context, trace } from "@opentelemetry/api";
import type { AcquireOptions, LockHandle, Locks } from "../types.js";
import { AcquireCall, type Operation } from "./acquire-call.js";
import type { Holds } from "./holds.js";
import type { Recorder } from "./recorder.js";

export interface TracedState {
  r: Recorder;
  calls: AsyncLocalStorage<AcquireCall>;
  holds: Holds;
}

/**
 * `locks` with acquire, tryAcquire and withLock run as AcquireCalls, and close() ending the open hold spans;
 * every other member is the instance's own.
 */
export function tracedLocks<L extends Locks>(locks: L, s: TracedState): L {
  // Several resources at once pass through: their holds still get spans (from the events), the call none.
  const own: Pick<Locks, "acquire" | "tryAcquire" | "withLock" | "close"> = {
    acquire: ((resource: string, opts?: AcquireOptions) =>
      Array.isArray(resource)
        ? locks.acquire(resource, opts)
        : traced(s, "acquire", resource, opts, () => locks.acquire(resource, opts))) as Locks["acquire"],
    tryAcquire: ((resource: string, opts?: AcquireOptions) =>
      Array.isArray(resource)
        ? locks.tryAcquire(resource, opts)
        : traced(s, "tryAcquire", resource, opts, () =>
            locks.tryAcquire(resource, opts),
          )) as Locks["tryAcquire"],
    withLock: (<T>(resource: string, fn: (lock: LockHandle) => Promise<T> | T, opts?: AcquireOptions) =>
      typeof fn !== "function" || Array.isArray(resource)
        ? locks.withLock(resource, fn, opts)
        : traced(s, "withLock", resource, opts, (call) =>
            locks.withLock(resource, call ? (h) => underHold(call, h, fn) : fn, opts),
          )) as Locks["withLock"],
    async close() {
      try {
        await locks.close();
      } finally {
        s.holds.closeAll();
      }
    },
  };
  return new Proxy(locks, {
    get(target, prop) {
      if (Object.hasOwn(own, prop)) return own[prop as keyof typeof own];
      const value: unknown = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

function traced<T>(
  s: TracedState,
  operation: Operation,
  resource: string,
  opts: Pick<AcquireOptions, "signal"> | undefined,
  start: (call: AcquireCall | undefined) => Promise<T>,
): Promise<T> {
  // Not a name: the core rejects it before any Redis call, with nothing to trace.
  if (typeof resource !== "string") return start(undefined);
  const call = new AcquireCall(s.r, operation, resource, opts?.signal);
  return s.calls
    .run(call, () => start(call))
    .then(
      (value) => {
        call.settled(value);
        return value;
      },
      (err: unknown) => {
        call.failed(err);
        throw err;
      },
    );
}

/** The callback's own spans become children of the hold span. */
function underHold<T>(call: AcquireCall, h: LockHandle, fn: (lock: LockHandle) => Promise<T> | T) {
  const hold = call.hold;
  if (!hold) return fn(h);
  return context.with(trace.setSpan(context.active(), hold), () => fn(h));
}
