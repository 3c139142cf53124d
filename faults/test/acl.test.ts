// Scenario 8a: the library and two API instances work as a Redis ACL user limited to their key
// patterns and to the commands they need, found empirically (ACL LOG shows any denial).
import { setTimeout as sleep } from "node:timers/promises";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ApiProcess, startApis, stopApis } from "../src/apis.js";
import { figure } from "../src/figures.js";
import { type RedisServer, startRedis } from "../src/redis-server.js";
import { apiWorkload, kindsWorkload, libraryWorkload } from "../src/workload.js";

/**
 * Key patterns: the library's (lock, fence, waiter queue) plus the app's (stock, orders, job runs). The release
 * script names its channel as KEYS[2] (so a Cluster routes it to the lock's slot), and Redis checks
 * declared keys against key patterns (read-write for EVAL): `lock-released:*` is needed as a key pattern.
 * Semaphores and read-write locks keep everything under `lock:semaphore:` and `lock:rw:` (hash, fence counter,
 * and the channel named as a key), which `lock:*` covers.
 */
export const ACL_KEYS = [
  "~lock:*",
  "~fence:*",
  "~lock-released:*",
  // the waiter queue of each lock and its entries' leases (queue:{r}, queue-leases:{r})
  "~queue:*",
  "~queue-leases:*",
  "~stock:*",
  "~order:*",
  "~orders:index",
  "~jobs:cleanup:runs",
  // demo runs: their event logs and metadata, the burst guard, scenario slots, the unsafe modes' barrier
  "~demo:*",
];
/**
 * Release messages (the mutex's, and the semaphores' and read-write locks' under their own prefixes: their
 * release scripts PUBLISH there and their waiters SUBSCRIBE), and the live view's keyspace notifications for
 * lock keys (PSUBSCRIBE needs this exact pattern). Turning notifications on needs CONFIG SET, which this user
 * rightly lacks: the live view logs that and falls back to periodic resyncs, so its one `config|get` attempt per
 * observer start is the expected denial.
 */
export const ACL_CHANNELS = [
  "&lock-released:*",
  "&lock:semaphore:lock-released:*",
  "&lock:rw:lock-released:*",
  "&__keyspace@0__:lock:*",
];
const expectedDenial = (d: unknown[]) => d.includes("config|get");
/**
 * Found empirically: dropping any one of these (FAULTS_ACL_DROP=+cmd) makes the test below fail,
 * except ZREM, which the cleanup job needs only once more than 1000 orders exist. HELLO and AUTH
 * need no permission; ioredis also sends CLIENT SETINFO, which Redis 7.0 does not have.
 */
export const ACL_COMMANDS = [
  // connection: CLIENT SETNAME (connectionName), PING (/healthz), INFO (system.info, burst reports)
  "+client|setname",
  "+ping",
  "+info",
  // the lock scripts (ioredis: EVAL on a new connection, EVALSHA after) and the commands inside them
  "+eval",
  "+evalsha",
  "+exists",
  "+hexists",
  "+hset",
  "+hincrby",
  "+pexpire",
  "+pttl",
  // tokens: max(last + 1, TIME in µs), kept in the fence key with a retention TTL (SET … PX)
  "+time",
  "+set",
  "+get",
  "+del",
  "+publish",
  // the waiter queue inside the scripts, and its length in the live view
  "+lindex",
  "+lpop",
  "+rpush",
  "+lpos",
  "+lrem",
  "+lset",
  "+hdel",
  "+llen",
  // release messages and list(); the live view's keyspace notifications
  "+subscribe",
  "+psubscribe",
  "+unsubscribe",
  "+scan",
  "+hgetall",
  // the app: stock, orders (MULTI), the cleanup job's run log
  "+hget",
  "+hmget",
  "+multi",
  "+exec",
  "+zadd",
  "+zrange",
  "+zrevrange",
  "+zrem",
  "+lpush",
  "+ltrim",
  "+lrange",
  // demo runs: event logs (RPUSH/EXPIRE), metadata (HMSET), the burst guard (SET NX PX in a script),
  // scenario slots (ZREMRANGEBYSCORE/ZCARD in a script); order retention (ZREMRANGEBYSCORE)
  "+rpush",
  "+expire",
  "+hmset",
  "+set",
  "+zremrangebyscore",
  "+zcard",
];

let server: RedisServer;
let admin: Redis;
let apis: ApiProcess[] = [];
let userUrl: string;

beforeAll(async () => {
  // FAULTS_ACL_DROP=+cmd drops one command, to show that each one is needed (see the report).
  const commands = ACL_COMMANDS.filter((c) => c !== process.env.FAULTS_ACL_DROP);
  const user = [
    "lockyard",
    "on",
    ">acl-test-pw",
    "resetkeys",
    ...ACL_KEYS,
    "resetchannels",
    ...ACL_CHANNELS,
    "-@all",
    ...commands,
  ];
  server = await startRedis({
    args: [
      "--user",
      ...user,
      "--user",
      "admin",
      "on",
      ">admin-pw",
      "~*",
      "&*",
      "+@all",
      "--user",
      "default",
      "off",
    ],
  });
  admin = new Redis(server.url, { username: "admin", password: "admin-pw" });
  userUrl = `redis://lockyard:acl-test-pw@127.0.0.1:${server.port}`;
});
afterAll(async () => {
  await stopApis(apis);
  admin?.disconnect();
  await server?.stop();
});

it("the library and the API run as an ACL user limited to their keys and commands, with no denial", async () => {
  const redis = new Redis(userUrl);
  let lib: string[];
  let kinds: string[];
  try {
    lib = await libraryWorkload(redis, "acl");
    kinds = await kindsWorkload(redis, "acl");
  } finally {
    redis.disconnect();
  }
  apis = await startApis(userUrl, 2, {
    JOB_INTERVAL_MS: "300",
    ORDER_PROCESSING_MS: "10",
    LOG_LEVEL: "fatal",
  });
  await sleep(700);
  const api = await apiWorkload(apis, "acl");
  const denials = ((await admin.call("ACL", "LOG")) as unknown[][]).filter((d) => !expectedDenial(d));
  const runs = Number(await admin.llen("jobs:cleanup:runs"));
  const log = denials.map((d) => JSON.stringify(d));
  figure(
    `acl: library (${lib.length} features, ${kinds.length} on semaphores and read-write locks) and 2 API instances (${api.length} calls, ${runs} job runs) as user lockyard ` +
      `(${ACL_KEYS.length} key patterns, ${ACL_COMMANDS.length} commands): ${denials.length} denials`,
  );
  expect(log).toEqual([]);
  expect(lib).toEqual([
    "watchdog renewal",
    "re-entry",
    "list",
    "handed over to a waiter",
    "fenced write",
    "release",
  ]);
  expect(kinds).toEqual(["semaphore permit handed to a waiter", "writer woken when the reader left"]);
  expect(api.filter((s) => !/ 200$/.test(s))).toEqual([]);
  expect(runs).toBeGreaterThan(0);
});

it("the ACL user cannot touch other keys or run other commands", async () => {
  const redis = new Redis(userUrl);
  try {
    const denied = await Promise.all(
      [
        () => redis.set("other:key", "1"),
        () => redis.get("session:1"),
        () => redis.eval("return redis.call('set', 'other:key', '1')", 0),
        () => redis.flushall(),
        () => redis.keys("*"),
        () => redis.call("CONFIG", "GET", "*"),
        () => redis.call("ACL", "LIST"),
        () => redis.call("SCRIPT", "FLUSH"),
        () => redis.publish("other-channel", "x"),
      ].map((f) =>
        f().then(
          () => "allowed",
          // A script's SET on a foreign key is refused for the key (SET itself is allowed: the burst guard).
          (e: Error) =>
            /^NOPERM|can't run this command|can't access/.test(e.message) ? "denied" : e.message,
        ),
      ),
    );
    expect(denied).toEqual(Array(9).fill("denied"));
  } finally {
    redis.disconnect();
  }
});
