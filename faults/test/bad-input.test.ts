// Scenario 7: fast-check throws malformed inputs at every tRPC procedure over HTTP, at both API
// instances. Expect no 5xx, processes that stay up, and data left untouched.
import fc from "fast-check";
import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ApiProcess, startApis, stopApis, trpc } from "../src/apis.js";
import { type BadRequest, badRequests, procedures } from "../src/bad-input.js";
import { figure } from "../src/figures.js";
import { type RedisServer, startRedis } from "../src/redis-server.js";
import { firstSseStatus } from "../src/sse.js";

// The whole suite runs in about 1.5 minutes, so `npm test` runs it all; FAULTS_SET=quick trims the fuzzing.
const RUNS = process.env.FAULTS_SET === "quick" ? 150 : 500;
let server: RedisServer;
let apis: ApiProcess[];
let redis: Redis;

beforeAll(async () => {
  server = await startRedis();
  redis = new Redis(server.url);
  apis = await startApis(server.url, 2, {
    JOB_INTERVAL_MS: "3600000",
    ORDER_PROCESSING_MS: "10",
    LOG_LEVEL: "fatal",
  });
  expect((await trpc(apis[0]!.url, "stock.reset", { productId: "fz-1", qty: 50 })).status).toBe(200);
  expect(
    (await trpc(apis[1]!.url, "order.submit", { orderId: "fz-o1", productId: "fz-1", quantity: 2 })).status,
  ).toBe(200);
});
afterAll(async () => {
  await stopApis(apis ?? []);
  redis?.disconnect();
  await server?.stop();
});

/** Every key and its serialized value, except the cleanup job's own bookkeeping. */
async function snapshot(): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const keys = await redis.keys("*");
  for (const k of keys.sort()) {
    if (k.startsWith("jobs:") || k.includes("{job:cleanup}")) continue;
    out.set(k, (await redis.dumpBuffer(k))?.toString("hex") ?? "");
  }
  return out;
}

async function send(
  url: string,
  type: string,
  path: string,
  req: BadRequest,
): Promise<{ status: number; code?: string }> {
  const query = req.text === undefined ? "" : `?input=${encodeURIComponent(req.text)}`;
  if (type === "subscription") return firstSseStatus(`${url}/trpc/${path}${query}`);
  const res =
    type === "query"
      ? await fetch(`${url}/trpc/${path}${query}`)
      : await fetch(`${url}/trpc/${path}`, {
          method: "POST",
          headers: { "content-type": "application/json" },
          body: req.text ?? "",
        });
  const body = (await res.json().catch(() => ({}))) as { error?: { data?: { code?: string } } };
  return { status: res.status, code: body.error?.data?.code };
}

it(`${RUNS} malformed inputs per procedure (${procedures.length} procedures) over HTTP: no 5xx, no crash, data untouched`, async () => {
  const before = await snapshot();
  const statuses: Record<number, number> = {};
  const fiveHundreds: string[] = [];
  let accepted = 0;
  let total = 0;
  for (const p of procedures) {
    let i = 0;
    await fc.assert(
      fc.asyncProperty(badRequests(p), async (req) => {
        const url = apis[i++ % 2]!.url;
        const r = await send(url, p.type, p.path, req);
        total++;
        statuses[r.status] = (statuses[r.status] ?? 0) + 1;
        if (r.status >= 500)
          fiveHundreds.push(`${p.path} ${req.what}: ${r.status} ${r.code} ${req.text?.slice(0, 200)}`);
        if (r.status < 400) accepted++;
        // Invalid by construction: only system.info, which takes no input, may accept it.
        if (p.base !== undefined)
          expect(
            r.status,
            `${p.path} accepted ${req.what}: ${req.text?.slice(0, 200)}`,
          ).toBeGreaterThanOrEqual(400);
        expect(r.status).toBeLessThan(500);
      }),
      { numRuns: RUNS },
    );
  }
  const crashed = apis.filter((a) => a.child.exitCode !== null || a.child.signalCode !== null);
  const health = await Promise.all(apis.map((a) => fetch(`${a.url}/healthz`).then((r) => r.status)));
  const after = await snapshot();
  const changed = [...new Set([...before.keys(), ...after.keys()])].filter(
    (k) => before.get(k) !== after.get(k),
  );
  figure(
    `bad input: ${total} malformed requests over ${procedures.length} procedures → ${fiveHundreds.length} 5xx ` +
      `(statuses ${JSON.stringify(statuses)}), ${crashed.length} crashes, ${changed.length} keys changed`,
  );
  expect(fiveHundreds).toEqual([]);
  expect(crashed).toEqual([]);
  expect(health).toEqual([200, 200]);
  expect(changed).toEqual([]);
  expect(accepted).toBeLessThanOrEqual(RUNS);
});
