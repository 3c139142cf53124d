// A process whose only work is one waiting acquire, ended by close() (keep-alive.test.ts). It runs the built
// library (npm test builds before it tests). Its IPC channel is unref'd, so only the library could keep it alive.
import { Redis } from "ioredis";
import { createLocks } from "../../dist/index.js";

process.channel?.unref();
const redis = new Redis(process.env.REDIS_URL);
const locks = createLocks({ redis });
const waiting = locks.acquire(process.env.RESOURCE, { waitMs: 20_000 }).catch((e) => e.name);
setTimeout(async () => {
  await locks.close();
  process.send?.({ op: "closed", outcome: await waiting });
  redis.disconnect();
}, 300).unref();
