import { setTimeout as sleep } from "node:timers/promises";
import type { ApiProcess } from "../../apps/api/test/servers.js";

export { type ApiProcess, startApis, stopApis } from "../../apps/api/test/servers.js";

export interface TrpcReply {
  status: number;
  data?: Record<string, unknown>;
  code?: string;
  message?: string;
}

/** One procedure call over plain HTTP, as any client would make it (queries GET, mutations POST). */
export async function trpc(
  url: string,
  path: string,
  input: unknown,
  opts: { method?: "GET" | "POST"; headers?: Record<string, string> } = {},
): Promise<TrpcReply> {
  const method = opts.method ?? "POST";
  const target =
    method === "GET"
      ? `${url}/trpc/${path}${input === undefined ? "" : `?input=${encodeURIComponent(JSON.stringify(input))}`}`
      : `${url}/trpc/${path}`;
  const res = await fetch(target, {
    method,
    headers: { "content-type": "application/json", ...opts.headers },
    body: method === "POST" ? JSON.stringify(input) : undefined,
  });
  const body = (await res.json().catch(() => ({}))) as {
    result?: { data?: Record<string, unknown> };
    error?: { message?: string; data?: { code?: string } };
  };
  return {
    status: res.status,
    data: body.result?.data,
    code: body.error?.data?.code,
    message: body.error?.message,
  };
}

/**
 * Until the API sells one unit of a fresh product again (stock.reset, then stock.deduct in redis mode): ms after
 * `since`. Past `giveUpMs` it fails with what the instance logged about its connections.
 */
export async function sellsAgain(
  api: ApiProcess,
  productId: string,
  since: number,
  giveUpMs: number,
): Promise<number> {
  for (;;) {
    const reset = await trpc(api.url, "stock.reset", { productId, qty: 1 }).catch(() => null);
    if (reset?.status === 200) {
      const sale = await trpc(api.url, "stock.deduct", { productId, mode: "redis" }).catch(() => null);
      if (sale?.status === 200 && sale.data?.ok === true) return performance.now() - since;
    }
    if (performance.now() - since > giveUpMs) {
      const log = api
        .output()
        .split("\n")
        .filter((l) => /redis|sentinel|cluster/i.test(l) && !/"url":"\/trpc/.test(l));
      throw new Error(
        `${api.instanceId} did not sell again within ${giveUpMs} ms; it logged:\n${log.join("\n")}`,
      );
    }
    await sleep(25);
  }
}

/**
 * A burst's deduct replies by what they said: a sale, sold out, a 503 saying Redis was unavailable, or
 * anything else (which a fault scenario must not see).
 */
export function byAnswer<R extends TrpcReply>(replies: R[]) {
  const ok = replies.filter((r) => r.status === 200 && r.data?.ok === true);
  const soldOut = replies.filter((r) => r.status === 200 && r.data?.reason === "sold-out");
  const unavailable = replies.filter((r) => r.status === 503 && r.code === "SERVICE_UNAVAILABLE");
  const other = replies.filter((r) => !ok.includes(r) && !soldOut.includes(r) && !unavailable.includes(r));
  return { ok, soldOut, unavailable, other };
}
