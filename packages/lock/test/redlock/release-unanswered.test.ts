// Rule 7 for Redlock's release, "a reply lost": a release written to a node that never answered (here it never
// reached the node; the client's command timeout ends the call) was not sent again (only releases the client
// refused to send were), so the lock stayed on that node until its lease ran out; on a majority of nodes, held
// by nobody that long.
// Found by the simulation's "held by nobody" check (`--redlock --extra` seed 2149). Now every release a node
// did not answer is retried in the background until one answers or the lease ends.
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ReplyCutter, startReplyCutter } from "../../../../scripts/lib/reply-cutter.mjs";
import { createRedlock, QuorumError } from "../../src/index.js";
import { uniq } from "../helpers.js";
import { failFast, type Nodes, ready, startNodes } from "../redlock-helpers.js";

let nodes: Nodes;
/** Proxies in front of nodes 1 and 2 (a majority of 3): what their clients send can be made to go nowhere. */
let cutters: ReplyCutter[];

beforeAll(async () => {
  nodes = await startNodes(3);
  cutters = await Promise.all([1, 2].map((i) => startReplyCutter(nodes.servers[i]!.url)));
});
afterAll(async () => {
  for (const c of cutters ?? []) await c.close();
  await nodes?.close();
});

it("a release a majority of nodes never answered (the command timed out) reaches them once they answer again: free long before the lease", async () => {
  const urls = [nodes.servers[0]!.url, cutters[0]!.url, cutters[1]!.url];
  const clients = urls.map((url) => {
    // As the README advises for clients that write: no resend, and a command timeout (a command whose answer
    // never comes fails after it).
    const c = new Redis(url, { ...failFast, autoResendUnfulfilledCommands: false, commandTimeout: 300 });
    c.on("error", () => {});
    return c;
  });
  await Promise.all(clients.map((c) => ready(c)));
  const rl = createRedlock({ clients, leaseMs: 10_000, waitMs: 0, nodeTimeoutMs: 500 });
  const r = uniq("rl.release-unanswered");
  const h = await rl.acquire(r);

  // The release is written to nodes 1 and 2 but never reaches them: no answer within the command timeout.
  for (const c of cutters) c.dropRequests();
  const err = await h.release().catch((e: unknown) => e);
  expect(err).toBeInstanceOf(QuorumError);
  // Then their connections go, and come back.
  for (const c of cutters) c.cut();

  const held = async () => (await Promise.all(nodes.clients.map((c) => c.exists(h.key)))).filter(Boolean);
  await expect.poll(held, { timeout: 3_000, interval: 20 }).toHaveLength(0);
  const other = createRedlock({ clients: nodes.clients, leaseMs: 3_000, waitMs: 0 });
  const next = await other.tryAcquire(r);
  expect(next, "still held on the nodes that never got the release").not.toBeNull();
  await next!.release();
  await other.close();
  await rl.close();
  for (const c of clients) c.disconnect();
});
