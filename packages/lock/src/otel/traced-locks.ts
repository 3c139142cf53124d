import type { AsyncLocalStorage } from "node:async_hooks";
import { context, trace } from "@opentelemetry/api";
import type { AcquireOptions, LockHandle, Locks, ReadWriteLock, RedisLocks, ResourceLock } from "../types.js";
import { AcquireCall, type Operation } from "./acquire-call.js";
import type { Holds } from "./holds.js";
import type { LockKindLabel, Recorder } from "./recorder.js";

export interface TracedState {
  r: Recorder;
  calls: AsyncLocalStorage<AcquireCall>;
  holds: Holds;
}

/**
 * `locks` with acquire, tryAcquire and withLock run as AcquireCalls (the same for the semaphores and read-write
 * locks it makes), and close() ending the open hold spans; every other member is the instance's own.
 */
export function tracedLocks<L extends Locks>(locks: L, s: TracedState): L {
  // Several resources at once pass through: their holds still get spans (from the events), the call none.
  const own: Partial<
    Pick<RedisLocks, "acquire" | "tryAcquire" | "withLock" | "close" | "semaphore" | "readWrite">
  > = {
    acquire: ((resource: string, opts?: AcquireOptions) =>
      Array.isArray(resource)
        ? locks.acquire(resource, opts)
        : traced(s, "acquire", resource, "mutex", opts, () =>
            locks.acquire(resource, opts),
          )) as Locks["acquire"],
    tryAcquire: ((resource: string, opts?: AcquireOptions) =>
      Array.isArray(resource)
        ? locks.tryAcquire(resource, opts)
        : traced(s, "tryAcquire", resource, "mutex", opts, () =>
            locks.tryAcquire(resource, opts),
          )) as Locks["tryAcquire"],
    withLock: (<T>(resource: string, fn: (lock: LockHandle) => Promise<T> | T, opts?: AcquireOptions) =>
      typeof fn !== "function" || Array.isArray(resource)
        ? locks.withLock(resource, fn, opts)
        : traced(s, "withLock", resource, "mutex", opts, (call) =>
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
  const kinds = locks as Partial<RedisLocks>;
  if (typeof kinds.semaphore === "function" && typeof kinds.readWrite === "function") {
    const { semaphore, readWrite } = kinds as RedisLocks;
    own.semaphore = (resource, permits) =>
      tracedLock(semaphore.call(locks, resource, permits), "semaphore", s);
    own.readWrite = (resource) => {
      const rw: ReadWriteLock = readWrite.call(locks, resource);
      return {
        resource: rw.resource,
        read: tracedLock(rw.read, "read", s),
        write: tracedLock(rw.write, "write", s),
      };
    };
  }
  return withOwn(locks, own);
}

/** One semaphore or read-write side with its acquire, tryAcquire and withLock run as AcquireCalls. */
function tracedLock<R extends ResourceLock>(lock: R, kind: LockKindLabel, s: TracedState): R {
  const { resource } = lock;
  const own: Pick<ResourceLock, "acquire" | "tryAcquire" | "withLock"> = {
    acquire: (opts) => traced(s, "acquire", resource, kind, opts, () => lock.acquire(opts)),
    tryAcquire: (opts) => traced(s, "tryAcquire", resource, kind, opts, () => lock.tryAcquire(opts)),
    withLock: (fn, opts) =>
      typeof fn !== "function"
        ? lock.withLock(fn, opts)
        : traced(s, "withLock", resource, kind, opts, (call) =>
            lock.withLock(call ? (h) => underHold(call, h, fn) : fn, opts),
          ),
  };
  return withOwn(lock, own);
}

/** `target` with the members in `own` replaced; every other member is the target's own, bound to it. */
function withOwn<T extends object>(target: T, own: object): T {
  return new Proxy(target, {
    get(t, prop) {
      if (Object.hasOwn(own, prop)) return own[prop as keyof typeof own];
      const value: unknown = Reflect.get(t, prop, t);
      return typeof value === "function" ? value.bind(t) : value;
    },
  });
}

function traced<T>(
  s: TracedState,
  operation: Operation,
  resource: string,
  kind: LockKindLabel,
  opts: Pick<AcquireOptions, "signal"> | undefined,
  start: (call: AcquireCall | undefined) => Promise<T>,
): Promise<T> {
  // Not a name: the core rejects it before any Redis call, with nothing to trace.
  if (typeof resource !== "string") return start(undefined);
  const call = new AcquireCall(s.r, operation, resource, kind, opts?.signal);
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
