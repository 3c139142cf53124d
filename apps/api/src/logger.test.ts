import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Writable } from "node:stream";
import { pino } from "pino";
import { afterAll, describe, expect, it } from "vitest";
import { createHttpLogger, recordInternalError } from "./logger.js";

const lines: Record<string, unknown>[] = [];
const sink = new Writable({
  write(chunk, _enc, done) {
    for (const l of String(chunk).split("\n")) if (l) lines.push(JSON.parse(l));
    done();
  },
});
const httpLog = createHttpLogger(pino({ level: "info" }, sink));
const server = createServer((req, res) => {
  httpLog(req, res);
  if (req.url === "/boom") {
    // What tRPC's onError does for INTERNAL_SERVER_ERROR: record, answer a generic 500.
    recordInternalError(req, new Error("db password is hunter2"));
    recordInternalError(req, new Error("second failure in the same batch"));
    res.writeHead(500, { "content-type": "application/json" }).end('{"error":"internal"}');
  } else if (req.url === "/unavailable") {
    res.writeHead(503).end();
  } else res.end("ok");
});
const url = await new Promise<string>((resolve) =>
  server.listen(0, "127.0.0.1", () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)),
);
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe("request logs", () => {
  it("log an internal error once, on the request's line with its id, and never send it to the client", async () => {
    const res = await fetch(`${url}/boom`, { headers: { "x-request-id": "r-1" } });
    expect(await res.text()).not.toMatch(/hunter2/);
    await new Promise((r) => setTimeout(r, 50));
    const mine = lines.filter((l) => l.reqId === "r-1");
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      level: 50,
      msg: "request failed",
      err: { message: "db password is hunter2" },
    });
    expect(mine[0]!.moreErrors).toMatchObject([{ message: "second failure in the same batch" }]);
    expect(lines.filter((l) => JSON.stringify(l).includes("hunter2"))).toHaveLength(1);
  });

  it("log a deliberate 5xx at warn without a made-up error, and a 200 at info", async () => {
    await fetch(`${url}/unavailable`, { headers: { "x-request-id": "r-2" } });
    await fetch(`${url}/fine`, { headers: { "x-request-id": "r-3" } });
    await new Promise((r) => setTimeout(r, 50));
    const warn = lines.find((l) => l.reqId === "r-2");
    expect(warn).toMatchObject({ level: 40, res: { statusCode: 503 } });
    expect(warn?.err).toBeUndefined();
    expect(lines.find((l) => l.reqId === "r-3")).toMatchObject({ level: 30, res: { statusCode: 200 } });
  });
});
