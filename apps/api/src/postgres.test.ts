import { pino } from "pino";
import { expect, it } from "vitest";
// @ts-expect-error plain .mjs helper without types
import { freePort } from "../../../scripts/lib/ports.mjs";
import { connectPostgres } from "./postgres.js";

it("with Redis and PostgreSQL both down, the postgres mode's reason is PostgreSQL, in the warning too", async () => {
  const port = (await freePort()) as number;
  const warnings: string[] = [];
  const logger = pino({ level: "warn" }, { write: (s: string) => void warnings.push(s) });
  let reason: string | null = null;
  const conn = connectPostgres({
    url: `postgres://postgres@127.0.0.1:${port}/lockyard`,
    instanceId: "pg-reason",
    leaseMs: 2_000,
    logger,
    retryMs: 60_000,
    onChange: (_mode, r) => {
      reason = r;
    },
    fenceFloor: () =>
      Promise.reject(new Error("Stream isn't writeable and enableOfflineQueue options is false")),
  });
  await conn.ready;
  await conn.close();
  expect(reason).toMatch(new RegExp(`^PostgreSQL at 127.0.0.1:${port}/lockyard is unreachable`));
  expect(warnings).toHaveLength(1);
  expect(JSON.parse(warnings[0]!).msg).toBe(
    `postgres mode unavailable: PostgreSQL at 127.0.0.1:${port}/lockyard is unreachable`,
  );
});
