import type { ServerResponse } from "node:http";
import type { Redis } from "ioredis";
import type { Registry } from "prom-client";

function json(res: ServerResponse, status: number, body: unknown) {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}

/** 200 when Redis answers PING, else 503; both say which instance answered. */
export async function healthz(res: ServerResponse, redis: Redis, instanceId: string): Promise<void> {
  const started = performance.now();
  try {
    await redis.ping();
    json(res, 200, { ok: true, instanceId, redis: "up", pingMs: performance.now() - started });
  } catch (err) {
    json(res, 503, { ok: false, instanceId, redis: "down", error: (err as Error).message });
  }
}

export async function metrics(res: ServerResponse, registry: Registry): Promise<void> {
  res.writeHead(200, { "content-type": registry.contentType });
  res.end(await registry.metrics());
}
