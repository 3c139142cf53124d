// A process whose only work is a waiting acquire, when the server ends its connections (pg_terminate_backend,
// a restart): every timer the library keeps is unref'd, so with the sockets gone nothing kept Node alive, and
// it exited with the acquire never settled (code 13 under top-level await, 0 with .then(): work silently
// skipped). A waiting acquire is work the caller awaits: it keeps the process alive until it settles.
import { fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import type pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { sleep, uniq } from "../helpers.js";
import { pgPool, TABLE } from "../pg-helpers.js";

const WORKER = fileURLToPath(new URL("./alive-worker.mjs", import.meta.url));

let direct: pg.Pool;
beforeAll(async () => {
  direct = await pgPool();
});
afterAll(async () => {
  await direct.end();
});

describe("PostgreSQL backend: a process waiting for a lock", () => {
  it("stays alive and gets the lock when the server ends its connections while it waits", async () => {
    const res = uniq("pg-alive");
    const appName = `alive-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    // Held by another owner until its lease ends: no release will announce it, the waiter sleeps until then.
    await direct.query(
      `INSERT INTO ${TABLE} (resource, owner, count, expires_at, fence, waiters)
       VALUES ($1, 'someone-else', 1, now() + interval '1500 ms', nextval('${TABLE}_fence'), false)`,
      [res],
    );
    const child = fork(WORKER, [], {
      env: { ...process.env, PG_URL: inject("pgUrl"), APP_NAME: appName, TABLE, RESOURCE: res },
      stdio: "inherit",
    });
    const messages: string[] = [];
    child.on("message", (m: { op: string; error?: string }) =>
      messages.push(m.error ? `${m.op}: ${m.error}` : m.op),
    );
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
    const deadline = performance.now() + 10_000;
    while (!messages.includes("waiting") && performance.now() < deadline) await sleep(20);
    expect(messages).toContain("waiting");
    await sleep(200); // asleep by now, its LISTEN made
    await direct.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1", [
      appName,
    ]);
    expect(await exited).toBe(0);
    expect(messages.join(" | ")).toMatch(/acquired/);
  });
});
