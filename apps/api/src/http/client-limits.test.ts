// The per-client stream cap must count every spelling of a subscription's path that tRPC serves as one:
// `locks%2Ewatch` was served (tRPC decodes the path) but not counted, so one client could open any number.
import { createServer, get, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { createHTTPHandler } from "@trpc/server/adapters/standalone";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testContext } from "../../test/context.js";
import { appRouter } from "../root.js";
import { ClientLimits, streamCall } from "./client-limits.js";
import { guardRequest } from "./guard.js";
import { plain } from "./headers.js";

const streamPaths = new Set(
  Object.entries(appRouter._def.procedures as Record<string, { _def?: { type?: string } }>)
    .filter(([, p]) => p._def?.type === "subscription")
    .map(([path]) => path),
);

const input = encodeURIComponent(JSON.stringify({ prefix: "test:client-limits:" }));
/** Spellings of `locks.watch` that tRPC serves as that subscription. */
const disguised = [
  "/trpc/locks.watch",
  "/trpc/locks%2Ewatch",
  "/trpc/locks%2ewatch",
  "/trpc/%6Cocks%2Ewatch",
  "/trpc/x/../locks.watch",
  "/trpc/x/%2e%2e/locks.watch",
  "/trpc/../abcdelocks.watch",
];

describe("streamCall", () => {
  it.each([
    ...disguised,
    "/trpc/demo.runs%2Ewatch",
    "/trpc/demo%2Eruns%2Ewatch?input=%7B%7D",
    "/trpc/stock.get,locks%2Ewatch?batch=1",
  ])("counts %s as a stream", (url) => {
    expect(streamCall(url, streamPaths)).toBe("stream");
  });

  it.each(["/trpc/stock.get", "/trpc/locks.list", "/trpc/locks.watch,x?batch=0", "/healthz", "/api/docs"])(
    "does not count %s",
    (url) => {
      expect(streamCall(url, streamPaths)).toBe("other");
    },
  );

  it.each(["/trpc/locks%E0watch", "/trpc/locks.watch%"])("calls %s undecodable (answered 400)", (url) => {
    expect(streamCall(url, streamPaths)).toBe("undecodable");
  });
});

describe("the stream cap in front of tRPC", () => {
  let t: Awaited<ReturnType<typeof testContext>>;
  let server: Server;
  const newLimits = () => new ClientLimits({ connections: 1_000, streams: 20 });
  let limits = newLimits();

  beforeAll(async () => {
    t = await testContext();
    const trpc = createHTTPHandler({ router: appRouter, basePath: "/trpc/", createContext: () => t.ctx });
    // The API's own guard (http/guard.ts), then server.ts's routing to tRPC.
    server = createServer((req, res) => {
      const host = { port: () => (server.address() as AddressInfo).port, allowed: [], apiUrls: [] };
      if (guardRequest(req, res, { host, origins: new Set(), limits, streamPaths })) return;
      if ((req.url ?? "/").startsWith("/trpc/")) return trpc(req, res);
      plain(res, 404, { error: "not found" });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await t.close();
  });

  /**
   * Opens a stream with the path sent as written (fetch would resolve its dot segments first); resolves with
   * its status once the headers are in, and a way to close it.
   */
  function open(path: string): Promise<{ status: number; type: string | undefined; close: () => void }> {
    const { port } = server.address() as AddressInfo;
    const full = `${path}${path.includes("?") ? "&" : "?"}input=${input}`;
    return new Promise((resolve, reject) => {
      const req = get({ host: "127.0.0.1", port, path: full, agent: false }, (res) =>
        resolve({
          status: res.statusCode ?? 0,
          type: res.headers["content-type"],
          close: () => req.destroy(),
        }),
      );
      req.on("error", reject);
    });
  }

  it("serves each disguised spelling as the locks.watch stream, and counts it", async () => {
    for (const path of disguised) {
      const s = await open(path);
      expect({ path, status: s.status, type: s.type }).toEqual({
        path,
        status: 200,
        type: "text/event-stream",
      });
      s.close();
    }
  });

  it("answers 429 beyond 20 streams opened through `locks%2Ewatch`", async () => {
    limits = newLimits();
    const streams = [];
    try {
      for (let i = 0; i < 20; i++) streams.push(await open("/trpc/locks%2Ewatch"));
      expect(streams.map((s) => s.status)).toEqual(Array(20).fill(200));
      for (const path of disguised) streams.push(await open(path));
      expect(streams.slice(20).map((s) => s.status)).toEqual(Array(disguised.length).fill(429));
    } finally {
      for (const s of streams) s.close();
    }
  });

  it("answers 400 to a path that is not valid percent-encoding", async () => {
    expect((await open("/trpc/locks%E0watch")).status).toBe(400);
  });
});
