import { LockChild } from "../child-process.js";
import type { Timeline } from "../timeline.js";

/** Client A: a real child process that takes the lock with the watchdog on, announced on the timeline. */
export async function childAcquires(tl: Timeline, resource: string, leaseMs: number) {
  const { ctx } = tl;
  const child = new LockChild();
  try {
    const got = await child.ask(
      {
        type: "acquire",
        redisUrl: ctx.config.redisUrl,
        instanceId: `${ctx.config.instanceId}-child`,
        resource,
        leaseMs,
        waitMs: 5_000,
      },
      10_000,
    );
    if (got.type !== "acquired") throw new Error(`child could not acquire: ${JSON.stringify(got)}`);
    await tl.emit("client A", "acquired", `process ${got.pid} acquires (watchdog, lease ${leaseMs} ms)`, {
      token: got.token,
      pid: got.pid,
    });
    return { child, pid: got.pid, token: got.token };
  } catch (error) {
    await child.stop();
    throw error;
  }
}
