// The REST face (http/rest.ts) on an in-process HTTP server over the suite's real Redis: what a test of one REST
// behaviour needs without starting API processes.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createRestHandler } from "../src/http/rest.js";
import { testContext, uid } from "./context.js";

/** The API's own body cap (server.ts). */
const MAX_BODY_BYTES = 64 * 1024;

export async function startRest(opts: Parameters<typeof testContext>[0] = {}) {
  const t = await testContext(opts);
  const handle = createRestHandler(t.ctx, { maxBodySize: MAX_BODY_BYTES });
  const responses: ServerResponse[] = [];
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    responses.push(res);
    handle(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    ...t,
    url,
    /** The server's side of every request so far, oldest first. */
    responses,
    /** A product with `stock` units, known to the deduct routes. */
    async product(stock: number): Promise<string> {
      const productId = uid("rest");
      await t.caller.stock.reset({ productId, qty: stock });
      return productId;
    },
    async stock(productId: string): Promise<number> {
      return (await t.caller.stock.get({ productId })).qty;
    },
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await t.close();
    },
  };
}

export type RestServer = Awaited<ReturnType<typeof startRest>>;

/** A POST whose body is sent exactly as given, as JSON. */
export function postJson(url: string, body: string, signal?: AbortSignal): Promise<Response> {
  return fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
    ...(signal ? { signal } : {}),
  });
}
