// A separate process that holds a lock for the fencing and crash scenarios, so that pausing
// (SIGSTOP) or killing (SIGKILL) it is real. Driven over IPC by demo/child-process.ts.
import { createLocks, type LockHandle } from "@lockyard/lock";
import { createRedis, waitUntilReady } from "../redis.js";
import { fencedStockWrite } from "../stock/fenced.js";
import type { ChildReply, ChildRequest } from "./child-protocol.js";

let handle: LockHandle | undefined;
let ready: ReturnType<typeof setup> | undefined;

function setup(redisUrl: string, instanceId: string, leaseMs: number) {
  const redis = createRedis(redisUrl, { name: `${instanceId}-child` });
  return { redis, locks: createLocks({ redis, leaseMs, instanceId }) };
}

function reply(msg: ChildReply) {
  process.send?.(msg);
}

process.on("message", async (msg: ChildRequest) => {
  try {
    switch (msg.type) {
      case "acquire": {
        ready = setup(msg.redisUrl, msg.instanceId, msg.leaseMs);
        if (!(await waitUntilReady(ready.redis, 5_000))) throw new Error("redis unreachable from the child");
        handle = await ready.locks.acquire(msg.resource, { waitMs: msg.waitMs });
        reply({ type: "acquired", owner: handle.owner, token: handle.token, pid: process.pid });
        break;
      }
      case "write": {
        if (!ready || !handle) throw new Error("no lock held");
        const stillHeld = handle.isHeld();
        // Deliberately writes whatever it believes: the fence, not the client, must catch it.
        const r = await fencedStockWrite(ready.redis, msg.productId, handle.token ?? 0, msg.delta);
        reply({ type: "written", ok: r.ok, qty: r.ok ? r.qty : null, token: handle.token, stillHeld });
        break;
      }
    }
  } catch (err) {
    reply({ type: "error", message: (err as Error).message });
  }
});

process.on("disconnect", () => process.exit(0));
