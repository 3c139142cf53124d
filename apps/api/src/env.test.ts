import { describe, expect, it } from "vitest";
import { parseEnv } from "./env.js";
import { parseTarget, redisTarget, targetString } from "./redis.js";
import { parseClusterNodes } from "./system/cluster-nodes.js";

describe("REDIS_CLUSTER_NODES", () => {
  it("unset: one Redis at REDIS_URL", () => {
    const env = parseEnv({ REDIS_URL: "redis://10.0.0.1:6390" });
    expect(env.REDIS_CLUSTER_NODES).toEqual([]);
    expect(redisTarget(env)).toEqual({ topology: "single", url: "redis://10.0.0.1:6390" });
  });

  it("set: a Cluster from its seed nodes, which survive the trip to a child process as a string", () => {
    const env = parseEnv({
      REDIS_CLUSTER_NODES: " 127.0.0.1:7001, redis-a.internal:7002 ,",
      REDIS_URL: "redis://x:1",
    });
    const target = redisTarget(env);
    expect(target).toEqual({
      topology: "cluster",
      nodes: [
        { host: "127.0.0.1", port: 7001 },
        { host: "redis-a.internal", port: 7002 },
      ],
    });
    expect(parseTarget(targetString(target))).toEqual(target);
  });

  it("refuses anything but host:port with a readable error", () => {
    for (const bad of ["127.0.0.1", "redis://127.0.0.1:7001", "h:70000", "h:7001,:7002"]) {
      expect(() => parseEnv({ REDIS_CLUSTER_NODES: bad }), bad).toThrow(/REDIS_CLUSTER_NODES/);
    }
  });
});

describe("REDIS_SENTINELS", () => {
  it("set: the primary named REDIS_SENTINEL_NAME through its Sentinels, also as a child process's string", () => {
    const env = parseEnv({
      REDIS_SENTINELS: "127.0.0.1:26379,s2.internal:26380",
      REDIS_SENTINEL_NAME: "shop",
    });
    const target = redisTarget(env);
    expect(target).toEqual({
      topology: "sentinel",
      name: "shop",
      sentinels: [
        { host: "127.0.0.1", port: 26379 },
        { host: "s2.internal", port: 26380 },
      ],
    });
    expect(parseTarget(targetString(target))).toEqual(target);
    expect(redisTarget(parseEnv({ REDIS_SENTINELS: "h:1" }))).toMatchObject({ name: "mymaster" });
  });

  it("refuses a bad list, a bad name, and a Cluster with Sentinels, each saying what to set", () => {
    expect(() => parseEnv({ REDIS_SENTINELS: "h" })).toThrow(/REDIS_SENTINELS/);
    expect(() => parseEnv({ REDIS_SENTINELS: "h:1", REDIS_SENTINEL_NAME: "a b" })).toThrow(
      /REDIS_SENTINEL_NAME/,
    );
    expect(() => parseEnv({ REDIS_SENTINELS: "h:1", REDIS_CLUSTER_NODES: "h:2" })).toThrow(/set one of them/);
  });
});

describe("parseClusterNodes", () => {
  it("keeps live masters with slots and live replicas, each with its master", () => {
    const reply = [
      "a1 127.0.0.1:7001@17001 myself,master - 0 0 1 connected 0-5460",
      "b2 127.0.0.1:7002@17002 master - 0 0 2 connected 5461-10922 [5461->-x]",
      "c3 127.0.0.1:7003@17003 master,fail - 0 0 3 disconnected",
      "d4 127.0.0.1:7004@17004 slave a1 0 0 1 connected",
      "e5 127.0.0.1:7006@17006 master - 0 0 7 connected 10923-16383",
      "f6 127.0.0.1:7005@17005 slave,fail b2 0 0 2 disconnected",
    ].join("\n");
    expect(parseClusterNodes(reply)).toEqual([
      { address: "127.0.0.1:7001", role: "master", master: null, slots: ["0-5460"] },
      { address: "127.0.0.1:7002", role: "master", master: null, slots: ["5461-10922"] },
      { address: "127.0.0.1:7004", role: "replica", master: "127.0.0.1:7001", slots: [] },
      { address: "127.0.0.1:7006", role: "master", master: null, slots: ["10923-16383"] },
    ]);
  });
});
