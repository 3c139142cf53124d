import { Agent, request as httpRequest } from "node:http";
import { Agent as HttpsAgent, request as httpsRequest } from "node:https";

/**
 * A minimal fetch over node:http with a bounded keep-alive pool, for the typed clients the burst uses:
 * at most `maxSockets` connections per API instance, so a burst stays under the per-client connection cap
 * of the instances it calls. Supports what tRPC's httpLink sends (method, headers, string body, signal).
 */
type Fetch = typeof globalThis.fetch;
/** Statuses a Response must be built without a body for. */
const NULL_BODY = new Set([101, 204, 205, 304]);

export function pooledFetch(maxSockets: number): { fetch: Fetch; close(): void } {
  const agents = {
    "http:": new Agent({ keepAlive: true, maxSockets }),
    "https:": new HttpsAgent({ keepAlive: true, maxSockets }),
  };
  const close = () => {
    agents["http:"].destroy();
    agents["https:"].destroy();
  };
  const fetch: Fetch = (input, init) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(typeof input === "string" ? input : input instanceof URL ? input.href : input.url);
      const isHttps = url.protocol === "https:";
      const headers = new Headers(init?.headers);
      const body = typeof init?.body === "string" ? init.body : undefined;
      if (body !== undefined) headers.set("content-length", String(Buffer.byteLength(body)));
      const req = (isHttps ? httpsRequest : httpRequest)(url, {
        method: init?.method ?? "GET",
        headers: Object.fromEntries(headers),
        agent: isHttps ? agents["https:"] : agents["http:"],
        ...(init?.signal ? { signal: init.signal } : {}),
      });
      req.on("response", (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const h = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (typeof v === "string") h.set(k, v);
          const status = res.statusCode ?? 500;
          const body = NULL_BODY.has(status) ? null : Buffer.concat(chunks);
          resolve(new Response(body, { status, headers: h }));
        });
      });
      req.on("error", reject);
      req.end(body);
    });
  return { fetch, close };
}
