import { describe, expect, it } from "vitest";
import { isRedisUnavailable } from "../../src/index.js";

const replyError = (message: string) => Object.assign(new Error(message), { name: "ReplyError" });

describe("isRedisUnavailable: the one classifier of 'Redis is not answering' (library and API)", () => {
  it("counts failures with no reply from Redis", () => {
    expect(isRedisUnavailable(new Error("Connection is closed."))).toBe(true);
    expect(
      isRedisUnavailable(new Error("Stream isn't writeable and enableOfflineQueue options is false")),
    ).toBe(true);
    expect(isRedisUnavailable(new Error("Command timed out"))).toBe(true);
    // A Cluster with every node down and its offline queue off (the API's setting) refuses at once.
    expect(isRedisUnavailable(new Error("Cluster isn't ready and enableOfflineQueue options is false"))).toBe(
      true,
    );
    expect(isRedisUnavailable(Object.assign(new Error("x"), { name: "MaxRetriesPerRequestError" }))).toBe(
      true,
    );
    expect(isRedisUnavailable(Object.assign(new Error("x"), { code: "EHOSTUNREACH" }))).toBe(true);
    expect(isRedisUnavailable(Object.assign(new Error("x"), { name: "ClusterAllFailedError" }))).toBe(true);
    // A slot mid-migration bounced between two masters (ASK, MOVED back) until ioredis gave up: nothing ran.
    expect(
      isRedisUnavailable(
        new Error("Too many Cluster redirections. Last error: ReplyError: MOVED 5798 127.0.0.1:7000"),
      ),
    ).toBe(true);
  });

  it("counts LOADING (Redis restarting, the command did not run) but no other reply error", () => {
    expect(isRedisUnavailable(replyError("LOADING Redis is loading the dataset in memory"))).toBe(true);
    expect(isRedisUnavailable(replyError("WRONGTYPE Operation against a key holding the wrong kind"))).toBe(
      false,
    );
    expect(isRedisUnavailable(replyError("NOSCRIPT No matching script"))).toBe(false);
    expect(isRedisUnavailable(replyError("ERR connection is closed by a script"))).toBe(false);
  });

  it("looks into wrapped errors (cause), a few levels deep, and is false for non-errors", () => {
    const wrapped = new Error("deduct failed", {
      cause: new Error("outer", { cause: new Error("Command timed out") }),
    });
    expect(isRedisUnavailable(wrapped)).toBe(true);
    expect(isRedisUnavailable(new Error("bug", { cause: new TypeError("x is undefined") }))).toBe(false);
    for (const v of [undefined, null, "Connection is closed.", 42]) expect(isRedisUnavailable(v)).toBe(false);
  });
});
