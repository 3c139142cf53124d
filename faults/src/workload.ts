// The same traffic for the ACL and TLS tests: every library feature and every API procedure that
// touches Redis, so that a missing permission or a broken connection option shows up.
import { setTimeout as sleep } from "node:timers/promises";
import { createLocks, fencedWrite } from "@lockyard/lock";
import type { Redis } from "ioredis";
import type { ApiProcess } from "./apis.js";
import { trpc } from "./apis.js";
import { sseUntil } from "./sse.js";

/** Acquire, watchdog renewals, a waiter woken by the release message, re-entry, list, fenced write. */
export async function libraryWorkload(redis: Redis, tag: string): Promise<string[]> {
  const locks = createLocks({ redis, leaseMs: 300, instanceId: tag });
  const done: string[] = [];
  try {
    const h = await locks.acquire(`${tag}:1`);
    const waiter = locks.acquire(`${tag}:1`, { waitMs: 3_000 });
    waiter.catch(() => {});
    await sleep(450);
    if (h.isHeld()) done.push("watchdog renewal");
    const again = await locks.acquire(`${tag}:1`, { owner: h.owner });
    if (again.count === 2) done.push("re-entry");
    if ((await locks.list({ match: `${tag}:*` })).length === 1) done.push("list");
    await again.release();
    const released = performance.now();
    await h.release();
    const w = await waiter;
    if (performance.now() - released < 1_000) done.push("handed over to a waiter");
    if ((await fencedWrite(redis, `stock:{${tag}}`, w.token!, 1)).ok) done.push("fenced write");
    if ((await w.release()) === "released") done.push("release");
  } finally {
    await locks.close();
  }
  return done;
}

/**
 * A semaphore permit and a read-write lock each handed to a waiter woken by its release message: the kinds
 * publish on channels of their own (`lock:semaphore:lock-released:{…}`, `lock:rw:lock-released:{…}`).
 */
export async function kindsWorkload(redis: Redis, tag: string): Promise<string[]> {
  const locks = createLocks({ redis, leaseMs: 1_000, instanceId: tag });
  const done: string[] = [];
  // Woken by the message: a waiter's fallback re-check comes 500 ms after its look, 400 ms after this release.
  const wokenSoon = async (
    release: () => Promise<unknown>,
    waiting: Promise<{ release(): Promise<unknown> }>,
  ) => {
    await sleep(100);
    await release();
    const released = performance.now();
    const next = await waiting;
    const woken = performance.now() - released;
    await next.release();
    return woken < 250;
  };
  try {
    const sem = locks.semaphore(`${tag}:sem`, 1);
    const permit = await sem.acquire();
    const second = sem.acquire({ waitMs: 3_000 });
    second.catch(() => {});
    if (await wokenSoon(() => permit.release(), second)) done.push("semaphore permit handed to a waiter");
    const rw = locks.readWrite(`${tag}:rw`);
    const reader = await rw.read.acquire();
    const writer = rw.write.acquire({ waitMs: 3_000 });
    writer.catch(() => {});
    if (await wokenSoon(() => reader.release(), writer)) done.push("writer woken when the reader left");
  } finally {
    await locks.close();
  }
  return done;
}

/** Every procedure that reaches Redis, on both instances; returns "path status" for each call. */
export async function apiWorkload(apis: ApiProcess[], tag: string): Promise<string[]> {
  const out: string[] = [];
  const [a, b] = [apis[0]!.url, apis[1]!.url];
  const call = async (url: string, path: string, input: unknown, method: "GET" | "POST" = "POST") => {
    const r = await trpc(url, path, input, { method });
    out.push(`${path} ${r.status}${r.code ? ` ${r.code}` : ""}`);
    return r;
  };
  const productId = `${tag}-p`;
  await call(a, "stock.reset", { productId, qty: 20 });
  for (const mode of ["redis", "atomic", "none", "local"])
    await call(b, "stock.deduct", { productId, mode, workMs: 1 });
  await call(a, "stock.get", { productId }, "GET");
  await call(a, "order.submit", { orderId: `${tag}-o`, productId, quantity: 1 });
  await call(b, "order.submit", { orderId: `${tag}-o`, productId, quantity: 1 });
  await call(b, "order.get", { orderId: `${tag}-o` }, "GET");
  // An order of several products takes their stock locks together.
  const other = `${tag}-p2`;
  await call(a, "stock.reset", { productId: other, qty: 5 });
  const items = [
    { productId: other, quantity: 1 },
    { productId, quantity: 1 },
  ];
  await call(b, "order.submit", { orderId: `${tag}-o2`, items });
  await call(a, "order.list", { limit: 5 }, "GET");
  await call(a, "locks.list", { prefix: "" }, "GET");
  await call(b, "system.info", undefined, "GET");
  await call(a, "jobs.runs", { limit: 5 }, "GET");
  const health = await fetch(`${a}/healthz`);
  out.push(`healthz ${health.status}`);
  const q = (input: unknown) => `?input=${encodeURIComponent(JSON.stringify(input))}`;
  // Demo runs touch demo products only (DEMO_PRODUCT_PREFIX, "demo-" by default).
  const started = await call(a, "demo.burst.start", {
    productId: `demo-${tag}-b`,
    requests: 20,
    initialStock: 10,
    mode: "redis",
    workMs: 1,
  });
  const burst = await sseUntil(
    `${a}/trpc/demo.runs.watch${q({ runId: started.data?.runId })}`,
    (d) => d.type === "report",
  );
  const report = burst.events.at(-1) as { type?: string; errors?: number } | undefined;
  out.push(
    `demo.runs.watch (burst) ${report?.type === "report" && report.errors === 0 ? 200 : `failed ${JSON.stringify(burst.error ?? report)}`}`,
  );
  const watch = await sseUntil(`${b}/trpc/locks.watch${q({ intervalMs: 50 })}`, () => true);
  out.push(`locks.watch ${watch.events.length === 1 ? 200 : `failed ${JSON.stringify(watch.error)}`}`);
  const run = await call(b, "demo.scenario.start", { name: "fencing", timeScale: 0.1 });
  const scenario = await sseUntil(
    `${b}/trpc/demo.runs.watch${q({ runId: run.data?.runId })}`,
    (d) => d.type === "done",
  );
  const end = scenario.events.at(-1) as { type?: string; ok?: boolean } | undefined;
  out.push(
    `demo.runs.watch (scenario) ${end?.type === "done" && end.ok ? 200 : `failed ${JSON.stringify(scenario.error ?? end)}`}`,
  );
  // The read-write demo: readers and a writer waiting for each other's release messages.
  const rw = await call(a, "demo.readWrite.run", { timeScale: 0.25 });
  const verdict = (rw.data as { verdict?: { ok?: boolean } } | undefined)?.verdict;
  out.push(
    `demo.readWrite.run (verdict) ${verdict?.ok === true ? 200 : `failed ${JSON.stringify(rw.data)}`}`,
  );
  return out;
}
