import type { Redis } from "ioredis";

/** CPU seconds the redis-server process has used so far (user + system, all its threads), from INFO cpu. */
export async function redisCpuSeconds(admin: Redis): Promise<number> {
  const info = await admin.info("cpu");
  const num = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)?.[1] ?? Number.NaN);
  return num("used_cpu_user") + num("used_cpu_sys");
}
