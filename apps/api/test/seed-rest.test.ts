// The seed article's REST face (router/seed.ts through trpc-to-openapi) on two real API processes, driven
// the way the article drives it: `curl` in a bash loop, its C# load test translated to Node, and curl
// double submits. Everything goes over HTTP to real servers on the suite's real Redis.
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { type ApiProcess, startApis, stopApis } from "./servers.js";

const examples = fileURLToPath(new URL("../../../examples/seed/", import.meta.url));

let apis: ApiProcess[];
let a: string;
let b: string;
beforeAll(async () => {
  // Order processing long enough that five curls started together all arrive while the first is working.
  apis = await startApis(inject("redisUrl"), 2, { ORDER_PROCESSING_MS: "2000" });
  [a, b] = apis.map((api) => api.url) as [string, string];
}, 30_000);
afterAll(() => stopApis(apis ?? []));

/** Runs a bash script; resolves with its stdout once it exits (rejects on a non-zero exit). */
function bash(script: string, env: Record<string, string> = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", ["-c", script], { env: { PATH: process.env.PATH, ...env } });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.on("error", reject);
    child.on("exit", (code) =>
      code === 0 ? resolve(out) : reject(new Error(`bash exited ${code}: ${err}`)),
    );
  });
}

/** An example script with the port of `npm start`'s first API replaced by `url`'s, and nothing else changed. */
function example(name: string, url: string): string {
  const port = new URL(url).port;
  return readFileSync(path.join(examples, name), "utf8").replaceAll("localhost:4001", `localhost:${port}`);
}

// A numeric id no other test or run uses (numbers are ids, as in the seed's productId=1001).
const freshId = () => 700_000_000 + Math.floor(Math.random() * 99_999_999);

async function reset(productId: number, stock: number) {
  const res = await fetch(`${a}/api/stock/reset?productId=${productId}&stock=${stock}`, { method: "POST" });
  expect(await res.json()).toEqual({ stock });
}

async function status(url: string, productId: number): Promise<unknown> {
  return (await fetch(`${url}/api/stock/status?productId=${productId}`)).json();
}

interface Reply {
  code: number;
  body: { success?: boolean; remainingStock?: number; message?: string };
}

/**
 * The seed's loop: `for i in $(seq 1 200); do curl -s -X POST ".../api/stock/deduct?productId=..." & done;
 * wait`, with odd requests sent to one instance and even ones to the other, each reply kept (status, body).
 */
async function seedLoop(productId: number, query = ""): Promise<Reply[]> {
  const dir = mkdtempSync(path.join(tmpdir(), "lockyard-seed-"));
  try {
    await bash(
      `for i in $(seq 1 200); do
  if [ $((i % 2)) -eq 0 ]; then api="$API_B"; else api="$API_A"; fi
  curl -s -o "$OUT/$i.json" -w '%{http_code}' -X POST "$api/api/stock/deduct?productId=${productId}${query}" > "$OUT/$i.code" &
done
wait`,
      { API_A: a, API_B: b, OUT: dir },
    );
    return Array.from({ length: 200 }, (_, i) => {
      const code = Number(readFileSync(path.join(dir, `${i + 1}.code`), "utf8"));
      const text = readFileSync(path.join(dir, `${i + 1}.json`), "utf8");
      return { code, body: text ? JSON.parse(text) : {} };
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Every success took exactly one unit: the remaining stocks they report are all different, one per unit. */
function expectOneUnitPerSuccess(replies: Reply[], initial: number) {
  const remaining = replies
    .filter((r) => r.body.success === true)
    .map((r) => r.body.remainingStock as number)
    .sort((x, y) => y - x);
  expect(remaining).toEqual(Array.from({ length: remaining.length }, (_, i) => initial - 1 - i));
  return remaining.length;
}

describe("the seed's bash loop: 200 background curls at both instances, stock 100", () => {
  it("redis mode (the default): 100 sales, 100 sold out, stock exactly 0, no 5xx", async () => {
    const productId = freshId();
    await reset(productId, 100);
    const replies = await seedLoop(productId);
    expect(replies.filter((r) => r.code >= 500)).toEqual([]);
    expect(replies.every((r) => r.code === 200)).toBe(true);
    expect(expectOneUnitPerSuccess(replies, 100)).toBe(100);
    const soldOut = replies.filter((r) => r.body.success === false);
    expect(soldOut).toHaveLength(100);
    expect(soldOut.every((r) => typeof r.body.message === "string" && Object.keys(r.body).length === 2)).toBe(
      true,
    );
    expect(await status(a, productId)).toEqual({ stock: 0 });
    expect(await status(b, productId)).toEqual({ stock: 0 });
  }, 120_000);

  it("mode=none: the same loop oversells, and the stock goes negative", async () => {
    // Checks overlap writes only while requests are in flight together: the longest work the API allows
    // keeps each one in flight long enough, however slowly 200 curls start on a busy machine.
    const doc = (await (await fetch(`${a}/api/openapi.json`)).json()) as OpenApiDoc;
    const workMs = deductBodySchema(doc).properties.workMs.maximum;
    expect(workMs).toBeGreaterThanOrEqual(200);
    // One repeat at most: oversold on either run is the claim; a run that did not oversell is reported.
    let oversold = 0;
    for (let run = 1; run <= 2 && oversold === 0; run++) {
      const productId = freshId();
      await reset(productId, 100);
      const replies = await seedLoop(productId, `&mode=none&workMs=${workMs}`);
      expect(replies.filter((r) => r.code >= 500)).toEqual([]);
      const sold = expectOneUnitPerSuccess(replies, 100);
      const { stock } = (await status(b, productId)) as { stock: number };
      expect(stock).toBe(100 - sold);
      oversold = sold - 100;
      if (oversold === 0) console.warn(`mode=none run ${run} sold exactly the stock; repeating once`);
    }
    expect(oversold).toBeGreaterThan(0);
  }, 180_000);
});

describe("order double submit with curl", () => {
  it("five concurrent submits of one order: one success and four 409 { message }, then a replay", async () => {
    const orderId = freshId();
    const dir = mkdtempSync(path.join(tmpdir(), "lockyard-order-"));
    try {
      await bash(
        `for i in 1 2 3 4 5; do
  if [ $((i % 2)) -eq 0 ]; then api="$API_B"; else api="$API_A"; fi
  curl -s -o "$OUT/$i.json" -w '%{http_code}' -X POST "$api/api/order/submit" \\
    -H "Content-Type: application/json" \\
    -d "{\\"orderId\\": ${orderId}}" > "$OUT/$i.code" &
done
wait`,
        { API_A: a, API_B: b, OUT: dir },
      );
      const replies = [1, 2, 3, 4, 5].map((i) => ({
        code: Number(readFileSync(path.join(dir, `${i}.code`), "utf8")),
        body: JSON.parse(readFileSync(path.join(dir, `${i}.json`), "utf8")) as Record<string, unknown>,
      }));
      const created = replies.filter((r) => r.code === 200);
      expect(created.map((r) => r.body)).toEqual([{ success: true, orderId, replayed: false }]);
      const conflicts = replies.filter((r) => r.code === 409);
      expect(conflicts).toHaveLength(4);
      for (const c of conflicts) expect(Object.keys(c.body)).toEqual(["message"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    // Finished: a duplicate, numeric or string, gets the order back.
    for (const [url, id] of [
      [b, orderId],
      [a, String(orderId)],
    ] as const) {
      const res = await fetch(`${url}/api/order/submit`, {
        method: "POST",
        headers: { "content-type": "application/json; charset=utf-8" },
        body: JSON.stringify({ orderId: id }),
      });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ success: true, orderId: id, replayed: true });
    }
    const stored = await (await fetch(`${b}/api/order/status?orderId=${orderId}`)).json();
    expect(stored).toMatchObject({
      orderId: String(orderId),
      productId: "1001",
      quantity: 1,
      status: "created",
    });
  }, 60_000);

  it("orderId <= 0, and any other bad input, is a 4xx with the seed's { message } naming the field", async () => {
    for (const orderId of [0, -1, "0", "-5", "00100001", 1.5, "a b", null]) {
      const res = await fetch(`${a}/api/order/submit`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ orderId }),
      });
      expect(res.status, JSON.stringify(orderId)).toBe(400);
      const body = (await res.json()) as { message: string };
      expect(Object.keys(body)).toEqual(["message"]);
      expect(body.message).toMatch(/^orderId: /);
    }
    const query = await fetch(`${b}/api/order/submit?orderId=-1`, { method: "POST" });
    expect(query.status).toBe(400);
    expect(await query.json()).toEqual({ message: expect.stringMatching(/^orderId: /) });
    const missing = await fetch(`${a}/api/order/status?orderId=${freshId()}`);
    expect(missing.status).toBe(404);
    expect(Object.keys((await missing.json()) as object)).toEqual(["message"]);
    const noProduct = await fetch(`${b}/api/stock/status?productId=${freshId()}`);
    expect(noProduct.status).toBe(404);
    expect(await noProduct.json()).toEqual({ message: expect.stringMatching(/^no product \d+ /) });
    // Refused by the server's guard before any route: the same shape, and the route's own methods.
    const put = await fetch(`${a}/api/stock/deduct?productId=1001`, { method: "PUT" });
    expect([put.status, put.headers.get("allow")]).toEqual([405, "POST"]);
    expect(Object.keys((await put.json()) as object)).toEqual(["message"]);
    const badMode = await fetch(`${b}/api/stock/deduct?productId=1001&mode=fast`, { method: "POST" });
    expect(badMode.status).toBe(400);
    expect(await badMode.json()).toEqual({ message: expect.stringMatching(/^mode: /) });
  });
});

describe("the seed's example scripts, unchanged but for the port", () => {
  it("examples/seed/deduct-loop.sh and load-test.mjs each sell exactly 100 of product 1001", async () => {
    await reset(1001, 100);
    const out = await bash(example("deduct-loop.sh", a));
    expect(out.match(/\{"stock":-?\d+\}/g)).toEqual(['{"stock":100}', '{"stock":0}']);

    await reset(1001, 100);
    const url = `http://localhost:${new URL(b).port}/api/stock/deduct?productId=1001`;
    const report = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [path.join(examples, "load-test.mjs"), url]);
      let text = "";
      child.stdout.on("data", (d) => {
        text += d;
      });
      child.on("error", reject);
      child.on("exit", (code) => (code === 0 ? resolve(text) : reject(new Error(`exit ${code}`))));
    });
    // As in the seed, every response is a 2xx (sold out is a 200 too); 100 of them are sales.
    expect(report).toMatch(/successful responses\): 200\n/);
    expect(report).toMatch(/units sold\): 100\n/);
    expect(await status(a, 1001)).toEqual({ stock: 0 });
  }, 120_000);

  it("examples/seed/order-double-submit.sh: one success, four 409s", async () => {
    const orderId = freshId();
    const out = await bash(example("order-double-submit.sh", a).replaceAll("100001", String(orderId)));
    expect(out.match(/"success":true/g)).toHaveLength(1);
    expect(out.match(/HTTP 409/g)).toHaveLength(4);
  }, 60_000);
});

interface OpenApiDoc {
  openapi: string;
  paths: Record<string, Record<string, { requestBody?: { content: Record<string, { schema: unknown }> } }>>;
}
function deductBodySchema(doc: OpenApiDoc) {
  return doc.paths["/api/stock/deduct"]!.post!.requestBody!.content["application/json"]!.schema as {
    properties: { workMs: { maximum: number } };
  };
}

describe("OpenAPI document and docs page", () => {
  it("both instances serve /api/openapi.json, and it validates against the OpenAPI 3.1 schema", async () => {
    const [docA, docB] = await Promise.all(
      [a, b].map(async (url): Promise<OpenApiDoc> => {
        const res = await fetch(`${url}/api/openapi.json`);
        expect(res.status).toBe(200);
        expect(res.headers.get("content-type")).toMatch(/^application\/json/);
        return (await res.json()) as OpenApiDoc;
      }),
    ).then(([x, y]) => [x!, y!] as const);
    expect(docA).toEqual(docB);
    expect(docA.openapi).toBe("3.1.0");
    // validate() dereferences in place: give it a copy.
    const result = await validate(structuredClone(docA) as never);
    expect(result.valid ? [] : result.errors).toEqual([]);
    expect(result.warnings).toEqual([]);
    expect(Object.keys(docA.paths).sort()).toEqual([
      "/api/order/status",
      "/api/order/submit",
      "/api/stock/deduct",
      "/api/stock/reset",
      "/api/stock/status",
    ]);
  });

  it("serves the Swagger UI page and its assets locally (no CDN)", async () => {
    const page = await fetch(`${b}/api/docs`);
    expect(page.status).toBe(200);
    const html = await page.text();
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.filter((r) => /^(https?:)?\/\//.test(r))).toEqual([]);
    for (const ref of refs.filter((r) => r.startsWith("/"))) {
      const res = await fetch(`${b}${ref}`);
      expect(res.status, ref).toBe(200);
      await res.arrayBuffer();
    }
    expect((await fetch(`${b}/api/docs/package.json`)).status).toBe(404);
  });
});
