// A process whose only work is one waiting acquire on PostgreSQL (waiting-alive.test.ts). It runs the built
// library (npm test builds before it tests). Says "waiting" once its first attempt was refused, then how the
// acquire ended; with the acquire still pending and nothing to keep Node alive it would exit unsettled (13).
import pg from "pg";
import { createPgLocks } from "../../dist/pg.js";

// The IPC channel to the test would keep the process alive on its own: like a real program's, only its work may.
process.channel?.unref();
const pool = new pg.Pool({
  connectionString: process.env.PG_URL,
  max: 3,
  application_name: process.env.APP_NAME,
});
pool.on("error", () => {});
// Its first look after the refusal comes after the holder's lease ends: meanwhile it only sleeps (no statement
// in flight for the server to cut).
const locks = createPgLocks({
  pool,
  table: process.env.TABLE,
  retry: { minMs: 1_600, maxMs: 2_000 },
  onEvent: (e) => e.type === "contended" && process.send?.({ op: "waiting" }),
});
try {
  const h = await locks.acquire(process.env.RESOURCE, { waitMs: 8_000 });
  process.send?.({ op: "acquired" });
  await h.release();
} catch (err) {
  process.send?.({ op: "failed", error: String(err) });
}
await locks.close();
await pool.end();
process.disconnect?.();
