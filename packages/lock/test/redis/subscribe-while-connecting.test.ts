// Waiters that contend while their subscriber connection is still connecting. ioredis 5.8–5.11 writes a
// SUBSCRIBE sent then among its handshake commands; the handshake's INFO fails on the subscribed connection
// and ioredis reconnects without the subscription or rejects it (ioredis #2037, fixed in 6.0), so waiters
// slept through the release (seen in the clean-clone CI: names.test.ts on Redlock, ioredis 5 run, about one
// Redlock per 30). A network with a round trip of ~30 ms (scripts/lib/delay-proxy.mjs) stretches the handshake
// so that contention starting at 10 ms intervals is sure to meet it. This file also runs under ioredis 5.
import type { Server } from "node:net";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
// @ts-expect-error plain .mjs helper without types
import { startDelayProxy } from "../../../../scripts/lib/delay-proxy.mjs";
// @ts-expect-error plain .mjs helper without types
import { freePort } from "../../../../scripts/lib/ports.mjs";
import type { LockHandle, Locks } from "../../src/index.js";
import { sleep, uniq } from "../helpers.js";
import { failFast, type Nodes, ready, startNodes } from "../redlock-helpers.js";
import { holderAndWaiter } from "./holder-and-waiter.js";

const DELAY_MS = 15;
const RESOURCES = 8;
const deaf = { retry: { minMs: 5_000, maxMs: 5_000, jitterMs: 0 } };

let nodes: Nodes;
const proxies: Server[] = [];
const conns: Redis[] = [];
const open: Locks[] = [];

beforeAll(async () => {
  nodes = await startNodes(3);
});
afterAll(async () => {
  for (const l of open) await l.close().catch(() => {});
  for (const c of conns) c.disconnect();
  for (const p of proxies) p.close();
  await nodes?.close();
});

/** A fail-fast client through a delaying proxy; every connection it duplicates reports the status in which each SUBSCRIBE was sent. */
async function slowClient(url: string, subscribedIn: string[]): Promise<Redis> {
  const port = (await freePort()) as number;
  proxies.push(await startDelayProxy(port, url, DELAY_MS));
  const c = new Redis(`redis://127.0.0.1:${port}`, failFast);
  c.on("error", () => {});
  conns.push(c);
  await ready(c);
  const duplicate = c.duplicate.bind(c);
  c.duplicate = ((override) => {
    const d = duplicate(override);
    conns.push(d);
    const send = d.sendCommand.bind(d);
    d.sendCommand = ((cmd, stream) => {
      if (cmd.name === "subscribe") subscribedIn.push(d.status);
      return send(cmd, stream);
    }) as typeof d.sendCommand;
    return d;
  }) as typeof c.duplicate;
  return c;
}

describe.each(holderAndWaiter(() => nodes, conns))(
  "waiters that contend while the subscriber connects (%s)",
  (_, pair) => {
    it("subscribe once it is ready, and every one of them is woken by the release", async () => {
      const subscribedIn: string[] = [];
      const { holder, waiter } = await pair((url) => slowClient(url, subscribedIn), deaf);
      open.push(holder, waiter);
      const names = Array.from({ length: RESOURCES }, (_, i) => uniq(`connecting-${i}`));
      const held = await Promise.all(names.map((n) => holder.acquire(n)));
      const waiting: Promise<LockHandle>[] = [];
      // The first refusal makes the subscriber connection; the others' SUBSCRIBEs come while it connects.
      for (const n of names) {
        waiting.push(waiter.acquire(n, { waitMs: 3_000 }));
        await sleep(10);
      }
      await sleep(400);
      await Promise.all(held.map((h) => h.release()));
      // Woken by the messages: their fallback timer (5 s) is past their wait (3 s).
      const got = await Promise.all(waiting);
      expect(got.every((h) => h.isHeld())).toBe(true);
      expect(subscribedIn.length).toBeGreaterThanOrEqual(RESOURCES);
      expect(subscribedIn.filter((s) => s !== "ready")).toEqual([]);
      await Promise.all(got.map((h) => h.release()));
    });
  },
);
