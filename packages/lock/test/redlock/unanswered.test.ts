// Rule 7 for Redlock, "a reply lost": calls a majority of nodes never answered, through TCP proxies in front of
// two nodes of three.
// - A release written to a node that never answered (here it never reached the node; the client's command
//   timeout ends the call) was not sent again (only releases the client refused to send were), so the lock
//   stayed on that node until its lease ran out; on a majority of nodes, held by nobody that long. Found by the
//   simulation's "held by nobody" check (`--redlock --extra` seed 2149). Now every release a node did not answer
//   is retried in the background until one answers or the lease ends.
// - On node clients without a command timeout and with `autoResendUnfulfilledCommands: false`, ioredis drops the
//   commands still unanswered when the connection closes and never settles them. Redlock's two scripts were not
//   under the library's never-resend guard (src/redis/no-resend.ts), so such a release was never retried and
//   such an attempt's grant never undone: held by nobody for the lease. Now they fail with ReplyLostError when
//   the connection closes, like the library's other scripts, and the retry or the undo follows.
// - Such a retry must not outlive the owner's next attempt: sent after the same owner acquired again, it would
//   delete the new grant on those nodes and let a second holder in. A new attempt drops the owner's retries not
//   yet sent (node-releases.ts, `supersede`); until now only the simulation checked it.
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ReplyCutter, startReplyCutter } from "../../../../scripts/lib/reply-cutter.mjs";
import { createRedlock, QuorumError } from "../../src/index.js";
import { uniq } from "../helpers.js";
import { failFast, type Nodes, ready, startNodes } from "../redlock-helpers.js";

const LEASE_MS = 10_000;
/** Far below the lease: what the lock does on its own, not what the lease ends. */
const FREE_WITHIN_MS = 3_000;

let nodes: Nodes;
/** Proxies in front of nodes 1 and 2 (a majority of 3): what their clients send, or get back, can go nowhere. */
let cutters: ReplyCutter[];

beforeAll(async () => {
  nodes = await startNodes(3);
  cutters = await Promise.all([1, 2].map((i) => startReplyCutter(nodes.servers[i]!.url)));
});
afterAll(async () => {
  for (const c of cutters ?? []) await c.close();
  await nodes?.close();
});

/** Node clients that never re-send, nodes 1 and 2 through the proxies; `commandTimeout` as given (or none). */
async function nodeClients(commandTimeout?: number): Promise<Redis[]> {
  const urls = [nodes.servers[0]!.url, cutters[0]!.url, cutters[1]!.url];
  const clients = urls.map((url) => {
    const c = new Redis(url, {
      ...failFast,
      autoResendUnfulfilledCommands: false,
      ...(commandTimeout === undefined ? {} : { commandTimeout }),
    });
    c.on("error", () => {});
    return c;
  });
  await Promise.all(clients.map((c) => ready(c)));
  return clients;
}

/** On how many nodes the key exists. */
const heldOn = (key: string) => async () =>
  (await Promise.all(nodes.clients.map((c) => c.exists(key)))).filter(Boolean).length;

/** Once the key is gone from every node, another instance can take the lock. */
async function expectFreeSoon(resource: string, key: string): Promise<void> {
  await expect.poll(heldOn(key), { timeout: FREE_WITHIN_MS, interval: 20 }).toBe(0);
  const other = createRedlock({ clients: nodes.clients, leaseMs: 3_000, waitMs: 0 });
  const next = await other.tryAcquire(resource);
  expect(next, "still held on the nodes that never answered").not.toBeNull();
  await next!.release();
  await other.close();
}

it.each([
  // As the README advises for clients that write: no resend, and a command timeout.
  { clients: "with a command timeout", commandTimeout: 300 },
  { clients: "without a command timeout", commandTimeout: undefined },
])(
  "a release a majority of nodes never answered ($clients) reaches them once they answer again: free long before the lease",
  async ({ commandTimeout }) => {
    const clients = await nodeClients(commandTimeout);
    const rl = createRedlock({ clients, leaseMs: LEASE_MS, waitMs: 0, nodeTimeoutMs: 500 });
    const r = uniq("rl.release-unanswered");
    const h = await rl.acquire(r);

    // The release is written to nodes 1 and 2 but never reaches them; then their connections go, and come back.
    for (const c of cutters) c.dropRequests();
    const err = await h.release().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(QuorumError);
    for (const c of cutters) c.cut();

    await expectFreeSoon(r, h.key);
    await rl.close();
    for (const c of clients) c.disconnect();
  },
);

it("an attempt a majority ran but whose answers were lost with the connection (no command timeout) is undone there: free long before the lease", async () => {
  const clients = await nodeClients();
  const rl = createRedlock({ clients, leaseMs: LEASE_MS, waitMs: 0, nodeTimeoutMs: 500 });
  const r = uniq("rl.acquire-unanswered");
  const key = `lock:{${r}}`;

  // Nodes 1 and 2 run the attempt (they grant it) but their answers never come back: too few answers.
  for (const c of cutters) c.holdReplies();
  const err = await rl.tryAcquire(r).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(QuorumError);
  expect(await heldOn(key)(), "the attempt ran on nodes 1 and 2").toBe(2);
  for (const c of cutters) c.cut();

  await expectFreeSoon(r, key);
  await rl.close();
  for (const c of clients) c.disconnect();
});

it("a release still to be retried is dropped when the same owner acquires again: the new grant stays, nobody else gets in", async () => {
  const clients = await nodeClients();
  const rl = createRedlock({ clients, leaseMs: LEASE_MS, waitMs: 0, nodeTimeoutMs: 500 });
  const r = uniq("rl.release-superseded");
  const h = await rl.acquire(r);

  for (const c of cutters) c.dropRequests();
  expect(await h.release().catch((e: unknown) => e)).toBeInstanceOf(QuorumError);
  const back = clients.slice(1).map((c) => new Promise((resolve) => c.once("ready", resolve)));
  for (const c of cutters) c.cut();
  // Back before the first retry (every lease/10, at most 200 ms, ± 25 %), the same owner takes the lock again:
  // nodes 1 and 2 still hold its old grant, which its new attempt counts as a yes.
  await Promise.all(back);
  const again = await rl.acquire(r, { owner: h.owner });
  expect(again.owner).toBe(h.owner);

  // Well past several retries: a retry sent now would delete the new grant on nodes 1 and 2.
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  expect(await heldOn(again.key)(), "the new grant is on every node").toBe(3);
  const other = createRedlock({ clients: nodes.clients, leaseMs: 3_000, waitMs: 0 });
  expect(await other.tryAcquire(r), "a second holder").toBeNull();
  await other.close();
  await again.release();
  expect(await heldOn(again.key)()).toBe(0);
  await rl.close();
  for (const c of clients) c.disconnect();
});
