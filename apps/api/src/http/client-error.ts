import { type IncomingMessage, type Server, type ServerResponse, STATUS_CODES } from "node:http";
import type { Duplex } from "node:stream";
import { baseHeaders, plain } from "./headers.js";

export interface ParserLimits {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  /** Node's maxHeaderSize: the request line and headers together. */
  maxHeaderBytes: number;
}

/** How long a refused socket is read from (and its data dropped) before it is destroyed. */
const LINGER_MS = 1_000;

/** What a request Node's HTTP parser refused is answered with, saying what to send instead. */
function refusal(err: NodeJS.ErrnoException, limits: ParserLimits): { status: number; message: string } {
  switch (err.code) {
    case "HPE_HEADER_OVERFLOW":
      return {
        status: 431,
        message: `the request line and headers exceed ${limits.maxHeaderBytes} bytes: send a shorter URL and fewer or smaller headers`,
      };
    case "HPE_CHUNK_EXTENSIONS_OVERFLOW":
      return { status: 413, message: "the chunk extensions are too large: send the body without them" };
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return {
        status: 408,
        message: `the request did not arrive in time: its headers within ${limits.headersTimeoutMs} ms and all of it within ${limits.requestTimeoutMs} ms (HEADERS_TIMEOUT_MS, REQUEST_TIMEOUT_MS)`,
      };
    default:
      return {
        status: 400,
        message: `the request is not valid HTTP/1.1 (${err.code ?? "parse error"}): check its request line, headers and body framing`,
      };
  }
}

/** A whole HTTP/1.1 response, written straight to the socket: the parser gave up, so there is no `res`. */
function rawResponse(status: number, message: string): string {
  const body = JSON.stringify({ message });
  return [
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? ""}`,
    "Content-Type: application/json",
    `Content-Length: ${Buffer.byteLength(body)}`,
    "Cache-Control: no-store",
    "X-Content-Type-Options: nosniff",
    "Vary: Origin",
    "Connection: close",
    "",
    body,
  ].join("\r\n");
}

/**
 * Node's own answers to what its parser refuses (400, 408, 413, 431) and to an `Expect` it does not know (417)
 * have no body and none of the API's headers, while every error is promised as `{ message }` with `nosniff`.
 */
export function answerParserRefusals(server: Server, limits: ParserLimits): void {
  // The parser keeps reporting a socket it gave up on (each chunk read after, a timeout check): answered once.
  const answered = new WeakSet<Duplex>();
  server.on("clientError", (err: NodeJS.ErrnoException, socket: Duplex) => {
    if (answered.has(socket)) return;
    answered.add(socket);
    // Node's own check: a response already begun on this socket must not be corrupted by a second one.
    const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (err.code === "ECONNRESET" || !socket.writable || inFlight?.headersSent) {
      socket.destroy();
      return;
    }
    const { status, message } = refusal(err, limits);
    socket.end(rawResponse(status, message));
    // Closed at once, with the rest of a 100 KB header still unread, the socket sends a reset that can discard
    // the answer before the client reads it. Reading on (the parser discards it) for a moment lets it arrive.
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  });
  server.on("checkExpectation", (req: IncomingMessage, res: ServerResponse) => {
    baseHeaders(res);
    plain(
      res,
      417,
      {
        message: `Expect: ${JSON.stringify(String(req.headers.expect).slice(0, 60))} is not supported: send the request without it, or with Expect: 100-continue`,
      },
      { connection: "close" },
    );
  });
}
