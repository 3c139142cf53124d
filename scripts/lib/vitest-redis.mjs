// Vitest globalSetup: one real redis-server per test run, on a free loopback port, stopped by PID.
// Tests read its URL with `inject("redisUrl")` (declare the type with `declare module "vitest"`).
import { startRedis } from "./redis.mjs";

export default async function setup(project) {
  const redis = await startRedis({ args: ["--enable-debug-command", "local"] });
  project.provide("redisUrl", redis.url);
  project.provide("redisPort", redis.port);
  return async () => {
    await redis.stop();
  };
}
