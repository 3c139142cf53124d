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
