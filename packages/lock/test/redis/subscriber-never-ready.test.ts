// A waiter whose subscriber connection never becomes ready: its TCP connection is accepted and then nothing
// answers (a half-dead proxy, a stuck load balancer), so every SUBSCRIBE waits on when-ready.ts for good while
// the client the locks were made with works. Two promises: the waiter still gets the lock by its own bounded
// re-check (never by the full wait), and close() at that moment ends the wait and the hanging connection at once.
// This file also runs under ioredis 5.
import { createServer, type Server, type Socket } from "node:net";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Locks, LocksClosedError } from "../../src/index.js";
import { sleep, uniq } from "../helpers.js";
import { failFast, type Nodes, ready, startNodes } from "../redlock-helpers.js";
import { holderAndWaiter } from "./holder-and-waiter.js";

const RECHECK_MS = 300;
const recheck = { retry: { minMs: RECHECK_MS, maxMs: RECHECK_MS, jitterMs: 0 } };

/** Accepts TCP connections and never answers: a connection to it stays in ioredis's `connect` status. */
interface Silent {
  port: number;
  sockets: Set<Socket>;
  /** Connections it accepted (open or closed). */
  accepted(): number;
  server: Server;
}

async function startSilent(): Promise<Silent> {
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createServer((s) => {
    accepted++;
    sockets.add(s);
    s.on("error", () => {});
    // Reads and drops what the client sends (the handshake), so a FIN from it is seen and answered.
    s.resume();
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return { port: address.port, sockets, accepted: () => accepted, server };
}

let nodes: Nodes;
const conns: Redis[] = [];

beforeAll(async () => {
  nodes = await startNodes(3);
});
afterAll(async () => {
  for (const c of conns) c.disconnect();
  await nodes?.close();
});

/** A working client whose duplicates (the subscriber) connect to the silent server instead. */
async function clientWithDeafSubscriber(url: string, silent: Silent): Promise<Redis> {
  const c = new Redis(url, failFast);
  c.on("error", () => {});
  conns.push(c);
  await ready(c);
  c.duplicate = ((override) => {
    const d = new Redis({ ...c.options, ...override, port: silent.port, host: "127.0.0.1" });
    d.on("error", () => {});
    conns.push(d);
    return d;
  }) as typeof c.duplicate;
  return c;
}

describe.each(holderAndWaiter(() => nodes, conns))(
  "a subscriber connection that never gets ready (%s)",
  (_, pair) => {
    let holder: Locks;
    let waiter: Locks;
    // Its own silent server: the sockets counted below are this waiter's subscriber connections only.
    let silent: Silent;
    beforeAll(async () => {
      silent = await startSilent();
      ({ holder, waiter } = await pair((url) => clientWithDeafSubscriber(url, silent), recheck));
    });
    afterAll(async () => {
      await holder.close();
      await waiter.close().catch(() => {});
      for (const s of silent.sockets) s.destroy();
      silent.server.close();
    });

    it("the waiter gets the lock by its re-check, not by the wait", async () => {
      const name = uniq("never-ready");
      const before = silent.accepted();
      const held = await holder.acquire(name);
      const waiting = waiter.acquire(name, { waitMs: 8_000 });
      await sleep(500);
      // The subscriber did try: it connected to the silent server and is stuck there.
      expect(silent.accepted()).toBeGreaterThan(before);
      const released = performance.now();
      await held.release();
      const got = await waiting;
      const after = performance.now() - released;
      expect(got.isHeld()).toBe(true);
      // One re-check interval and a script call, with room for a loaded machine; the wait was 8 s.
      expect(after).toBeLessThan(RECHECK_MS + 1_200);
      await got.release();
    });

    it("close() ends a wait stuck on the subscription at once, and the hanging connection with it", async () => {
      const name = uniq("never-ready-close");
      const held = await holder.acquire(name);
      const waiting = waiter.acquire(name, { waitMs: 30_000 });
      await sleep(200);
      expect(silent.sockets.size).toBeGreaterThan(0);
      const closing = performance.now();
      const outcome = waiting.then(
        () => "acquired",
        (e: unknown) => e,
      );
      await waiter.close();
      const closedAfter = performance.now() - closing;
      const result = await outcome;
      expect(result).toBeInstanceOf(LocksClosedError);
      expect(closedAfter).toBeLessThan(1_000);
      // The subscriber connection to the silent server is gone (closed by close(), not left reconnecting).
      await expect.poll(() => silent.sockets.size, { timeout: 2_000 }).toBe(0);
      const accepted = silent.accepted();
      await sleep(500);
      expect(silent.accepted()).toBe(accepted);
      await held.release();
    });
  },
);
