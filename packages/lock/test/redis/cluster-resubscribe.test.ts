// A Cluster's sharded subscribers are ioredis's own (ShardedSubscriber, one per master): they never reconnect
// (retryStrategy null) and ClusterSubscriberGroup makes new ones. An SSUBSCRIBE cut off by a dropped
// connection must still settle, as a plain SUBSCRIBE does (resubscribe.test.ts): a subscription that stays
// "subscribing" keeps a resource's waiters from the look they make once subscribed, and is never left.
// ioredis (5 and 6) sends it again through a new subscriber, so it is made; a failure would do as well (the
// resource's gate subscribes again). This pins that behaviour of ioredis, which the library relies on.
// Every master is reached through a reply cutter of its own (natMap), whose cutOnce kills the one connection that
// sends a given channel's SSUBSCRIBE.
import { Cluster } from "ioredis";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { startCluster } from "../../../../scripts/lib/cluster.mjs";
import { startReplyCutter } from "../../../../scripts/lib/reply-cutter.mjs";
import type { ReleaseSubscriber } from "../../src/core/backend.js";
import { releaseChannel } from "../../src/index.js";
import { keySlot } from "../../src/redis/slot.js";
import { createRedisSubscriber } from "../../src/redis/subscriber.js";
import { uniq, within } from "../helpers.js";

type Cutter = Awaited<ReturnType<typeof startReplyCutter>>;

let cluster: Awaited<ReturnType<typeof startCluster>>;
/** The cutter in front of each master, by the master's own "host:port". */
const cutters = new Map<string, Cutter>();
let admin: Cluster;

beforeAll(async () => {
  cluster = await startCluster({ masters: 3 });
  for (const n of cluster.nodes)
    cutters.set(`${n.host}:${n.port}`, await startReplyCutter(`redis://${n.host}:${n.port}`));
  admin = new Cluster(cluster.nodes);
  await admin.ping();
}, 60_000);
afterAll(async () => {
  admin?.disconnect();
  for (const c of cutters.values()) await c.close();
  await cluster?.stop();
});

/** A Cluster client that reaches every master through its cutter and, like the API's, re-sends nothing. */
async function clientThroughCutters(): Promise<Cluster> {
  const natMap = Object.fromEntries(
    [...cutters].map(([node, c]) => [node, { host: "127.0.0.1", port: c.port }]),
  );
  const client = new Cluster(cluster.nodes, {
    natMap,
    redisOptions: { autoResendUnfulfilledCommands: false },
  });
  client.on("error", () => {});
  await client.ping();
  return client;
}

/** The master ("host:port", as the cluster names it) that serves `channel`'s slot. */
const masterOf = (channel: string): string => admin.slots[keySlot(channel)]![0]!;

/** The cutter in front of the master that serves `channel`'s slot. */
const cutterOf = (channel: string): Cutter => cutters.get(masterOf(channel))!;

/** How many subscribers the sharded channel has, asked of the master that serves it. */
async function shardSubscribers(channel: string): Promise<number> {
  const node = admin
    .nodes("master")
    .find((n) => `${n.options.host}:${n.options.port}` === masterOf(channel))!;
  const reply = (await node.call("PUBSUB", "SHARDNUMSUB", channel)) as unknown[];
  return Number(reply[1]);
}

describe("a Cluster's sharded subscriber after an SSUBSCRIBE is cut off", () => {
  it.each(["before-server", "after-server"] as const)(
    "the SSUBSCRIBE cut off (%s) settles, and subscribing again hears releases",
    async (when) => {
      const client = await clientThroughCutters();
      const heard: string[] = [];
      const sub: ReleaseSubscriber = createRedisSubscriber(client, true, "lock:", (r) => heard.push(r));
      try {
        const r = uniq("cut");
        const ch = releaseChannel(r);
        const killed = cutterOf(ch).cutOnce(ch, when);
        const first = sub.subscribe(r).then(
          () => "made",
          () => "failed",
        );
        expect(await killed).toBe(true);
        // Made or failed: either way the resource's gate learns it, and a failed one subscribes again.
        expect(await within(first, 10_000)).not.toBe("still waiting");
        await vi.waitFor(
          async () => {
            await sub.subscribe(r).catch(() => {});
            expect(await shardSubscribers(ch)).toBeGreaterThan(0);
          },
          { timeout: 10_000, interval: 100 },
        );
        await admin.spublish(ch, "x");
        await vi.waitFor(() => expect(heard).toContain(r), { interval: 10 });
      } finally {
        await sub.close();
        client.disconnect();
      }
    },
  );
});
