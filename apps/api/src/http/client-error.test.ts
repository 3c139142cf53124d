// What Node's HTTP parser refuses was answered by Node itself: no body and none of the API's headers.
import { createServer, type Server } from "node:http";
import net, { type AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answerParserRefusals } from "./client-error.js";
import { baseHeaders, plain } from "./headers.js";

let server: Server;
let port: number;
beforeAll(async () => {
  // As server.ts creates it, with timeouts short enough to reach.
  server = createServer(
    { requestTimeout: 600, headersTimeout: 600, connectionsCheckingInterval: 100 },
    (_req, res) => {
      baseHeaders(res);
      plain(res, 200, { ok: true });
    },
  );
  answerParserRefusals(server, { headersTimeoutMs: 600, requestTimeoutMs: 600, maxHeaderBytes: 16_384 });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: unknown;
}

/** Sends `chunks` as written on a raw socket, then reads everything until the server closes it. */
function raw(...chunks: string[]): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    let out = "";
    socket.setEncoding("utf8");
    socket.on("data", (d) => {
      out += d;
    });
    socket.on("error", reject);
    socket.on("close", () => {
      const [head = "", body = ""] = out.split("\r\n\r\n", 2);
      const [statusLine = "", ...lines] = head.split("\r\n");
      const headers = Object.fromEntries(
        lines.map((l) => [l.slice(0, l.indexOf(":")).toLowerCase(), l.slice(l.indexOf(":") + 1).trim()]),
      );
      const text = headers["transfer-encoding"] === "chunked" ? dechunk(body) : body;
      resolve({ status: Number(statusLine.split(" ")[1]), headers, body: text ? JSON.parse(text) : null });
    });
    for (const c of chunks) socket.write(c);
  });
}

/** A chunked body's data: `<hex size>\r\n<data>\r\n`, up to the chunk of size 0. */
function dechunk(body: string): string {
  let out = "";
  let rest = body;
  for (;;) {
    const line = rest.indexOf("\r\n");
    const size = Number.parseInt(rest.slice(0, line), 16);
    if (!(size > 0)) return out;
    out += rest.slice(line + 2, line + 2 + size);
    rest = rest.slice(line + 2 + size + 2);
  }
}

const host = () => `Host: 127.0.0.1:${port}\r\n`;

function expectRefusal(answer: Answer, status: number, message: RegExp) {
  expect(answer.status).toBe(status);
  expect(answer.headers).toMatchObject({
    "content-type": "application/json",
    "x-content-type-options": "nosniff",
    connection: "close",
  });
  expect(answer.headers.vary?.toLowerCase()).toBe("origin");
  expect(answer.body).toEqual({ message: expect.stringMatching(message) });
}

describe("requests Node's parser refuses get a JSON { message } with the API's headers", () => {
  it("431 for 100 KB of headers, and for a URL over 16 KB", async () => {
    const big = await raw(`GET /healthz HTTP/1.1\r\n${host()}X-Big: ${"a".repeat(100_000)}\r\n\r\n`);
    expectRefusal(big, 431, /exceed 16384 bytes: send a shorter URL/);
    const longUrl = await raw(`GET /healthz?${"q".repeat(17_000)} HTTP/1.1\r\n${host()}\r\n`);
    expectRefusal(longUrl, 431, /exceed 16384 bytes/);
  });

  it("400 for a malformed request line, and for Content-Length with Transfer-Encoding", async () => {
    expectRefusal(await raw("HELLO\r\n\r\n"), 400, /not valid HTTP\/1.1 \(HPE_[A-Z_]+\)/);
    const smuggle = `POST /x HTTP/1.1\r\n${host()}Content-Length: 4\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`;
    expectRefusal(await raw(smuggle), 400, /not valid HTTP\/1.1/);
  });

  it("408 for headers that never finish", async () => {
    expectRefusal(await raw(`GET /healthz HTTP/1.1\r\n${host()}X-A: a`), 408, /did not arrive in time/);
  });

  it("417 for an Expect other than 100-continue; a plain request on the server still answers 200", async () => {
    const answer = await raw(
      `GET /healthz HTTP/1.1\r\n${host()}Expect: something-else\r\nConnection: close\r\n\r\n`,
    );
    expectRefusal(answer, 417, /Expect: "something-else" is not supported/);
    const ok = await raw(`GET /healthz HTTP/1.1\r\n${host()}Connection: close\r\n\r\n`);
    expect(ok.status).toBe(200);
  });
});
