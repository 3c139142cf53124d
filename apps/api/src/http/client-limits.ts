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
