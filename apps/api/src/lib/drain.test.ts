import { getEventListeners } from "node:events";
import { describe, expect, it } from "vitest";
import { Drain, ShuttingDownError } from "./drain.js";

describe("Drain", () => {
  it("stop() aborts the calls still watched, with a ShuttingDownError; ended calls are let go", async () => {
    const drain = new Drain();
    const request = new AbortController();
    const ended = drain.watch(request.signal);
    ended.end();
    const live = drain.watch(request.signal);
    expect(drain.watching).toBe(1);
    drain.stop("api-x");
    expect(live.signal.reason).toBeInstanceOf(ShuttingDownError);
    expect(live.signal.reason.message).toBe("instance api-x is shutting down");
    expect(ended.signal.aborted).toBe(false);
    expect(drain.watch().signal.reason).toBeInstanceOf(ShuttingDownError);
    expect(drain.watching).toBe(0);
  });

  it("a call follows the signal it watches, with that signal's reason, until it ends", () => {
    const drain = new Drain();
    const lock = new AbortController();
    const call = drain.watch(lock.signal);
    const lost = new Error("lost");
    lock.abort(lost);
    expect(call.signal.reason).toBe(lost);
    const after = new AbortController();
    const done = drain.watch(after.signal);
    done.end();
    after.abort();
    expect(done.signal.aborted).toBe(false);
  });

  it("keeps nothing of a call that ended: 10 000 calls leave no listener on the request and none watched", () => {
    // AbortSignal.any over one long-lived signal kept every call on Node 20.
    const drain = new Drain();
    const request = new AbortController();
    for (let i = 0; i < 10_000; i++) drain.watch(request.signal).end();
    expect(getEventListeners(request.signal, "abort")).toHaveLength(0);
    expect(drain.watching).toBe(0);
  });

  it("idle(): true once every request in flight has left, false when the time runs out first", async () => {
    const drain = new Drain();
    const leave = drain.enter();
    expect(await drain.idle(20)).toBe(false);
    const idle = drain.idle(5_000);
    leave();
    leave();
    expect(await idle).toBe(true);
    expect(drain.inFlight).toBe(0);
  });
});
