import type { Server } from "node:http";
import type { Socket } from "node:net";

/**
 * Per-address caps: open TCP connections (checked when a connection opens: over the cap it is closed at
 * once) and open SSE streams (checked per request, see `enterStream`). Counters are dropped at zero, so
 * the maps hold only addresses with something open.
 */
export class ClientLimits {
  readonly #connections = new Map<string, number>();
  readonly #streams = new Map<string, number>();

  constructor(readonly limits: { connections: number; streams: number }) {}

  attach(server: Server): void {
    server.on("connection", (socket: Socket) => {
      const addr = socket.remoteAddress ?? "unknown";
      const n = (this.#connections.get(addr) ?? 0) + 1;
      if (n > this.limits.connections) {
        socket.destroy();
        return;
      }
      this.#connections.set(addr, n);
      socket.once("close", () => dec(this.#connections, addr));
    });
  }

  /** Counts one stream for `addr` until `release` runs; false (nothing counted) beyond the cap. */
  enterStream(addr: string): (() => void) | null {
    const n = (this.#streams.get(addr) ?? 0) + 1;
    if (n > this.limits.streams) return null;
    this.#streams.set(addr, n);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      dec(this.#streams, addr);
    };
  }
}

function dec(map: Map<string, number>, key: string): void {
  const n = (map.get(key) ?? 1) - 1;
  if (n <= 0) map.delete(key);
  else map.set(key, n);
}

/** Where the tRPC handler is mounted (server.ts's `basePath`). */
const TRPC_BASE = "/trpc/";

/** What a GET to a URL opens, as far as the per-client stream cap is concerned. */
export type StreamCall = "stream" | "other" | "undecodable";

/**
 * Whether a GET to `url` runs one of the `streamPaths` subscriptions, decided on the procedure path tRPC will
 * run rather than on the raw URL, which clients can spell many ways (`locks%2Ewatch`, `x/../locks.watch`): the
 * path as the URL parser resolves it, less the base path's length (as tRPC's standalone adapter slices it),
 * percent-decoded, and each path of a batch (`a,b?batch=1`). "undecodable" (tRPC would refuse it as well): 400.
 */
export function streamCall(url: string, streamPaths: ReadonlySet<string>): StreamCall {
  if (!(url.split("?", 1)[0] ?? "").startsWith(TRPC_BASE)) return "other";
  let parsed: URL;
  let path: string;
  try {
    parsed = new URL(url, "http://localhost");
    path = decodeURIComponent(parsed.pathname.slice(TRPC_BASE.length));
  } catch {
    return "undecodable";
  }
  const paths = parsed.searchParams.get("batch") === "1" ? path.split(",") : [path];
  return paths.some((p) => streamPaths.has(p)) ? "stream" : "other";
}
