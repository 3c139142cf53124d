// A client that reconnects to a finished run after its last event (EventSource sends Last-Event-ID) must see the
// stream end at once: it used to stay open, polling Redis, until the run expired.
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { createHTTPServer } from "@trpc/server/adapters/standalone";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testContext } from "../../../test/context.js";
import { watchAll } from "../../../test/runs.js";
import { appRouter } from "../../root.js";

let t: Awaited<ReturnType<typeof testContext>>;
let runId: string;
let lastId: number;
beforeAll(async () => {
  t = await testContext();
  ({ runId } = await t.caller.demo.scenario.start({ name: "reentrancy", timeScale: 0.1 }));
  const events = await watchAll(t.caller, runId);
  expect(events.at(-1)?.event.type).toBe("done");
  lastId = Number(events.at(-1)?.id);
});
afterAll(() => t.close());

/** `p`, or a failure saying the stream was still open after `ms`. */
async function ended<T>(p: Promise<T>, ms = 3_000): Promise<T> {
  const late = sleep(ms, undefined, { ref: false }).then(() => {
    throw new Error(`the stream was still open after ${ms} ms`);
  });
  return Promise.race([p, late]);
}

describe("demo.runs.watch on a finished run", () => {
  it.each([
    ["its last event", () => String(lastId)],
    ["one past its last event", () => String(lastId + 1)],
    ["far past its last event", () => "999999999"],
  ])("ends at once, sending nothing, after %s", async (_, after) => {
    expect(await ended(watchAll(t.caller, runId, after()))).toEqual([]);
  });

  it("sends only what comes after lastEventId, then ends", async () => {
    const rest = await ended(watchAll(t.caller, runId, String(lastId - 1)));
    expect(rest.map((e) => e.id)).toEqual([String(lastId)]);
    expect(rest[0]?.event.type).toBe("done");
  });

  it("ends the SSE response of a reconnect with Last-Event-ID at the last event", async () => {
    const server = createHTTPServer({ router: appRouter, createContext: () => t.ctx });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    const ctl = new AbortController();
    try {
      const { port } = server.address() as AddressInfo;
      const input = encodeURIComponent(JSON.stringify({ runId }));
      const res = await fetch(`http://127.0.0.1:${port}/demo.runs.watch?input=${input}`, {
        headers: { "last-event-id": String(lastId) },
        signal: ctl.signal,
      });
      expect(res.status).toBe(200);
      const body = await ended(res.text());
      // No event of the run (those carry an id); tRPC's own "connected" and "return" frames only.
      expect(body).not.toMatch(/^id: /m);
    } finally {
      ctl.abort();
      server.closeAllConnections();
      server.close();
    }
  });
});
