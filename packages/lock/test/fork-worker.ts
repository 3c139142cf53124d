import { type ChildProcess, fork } from "node:child_process";
import { inject } from "vitest";

/** A forked test worker (one connection of its own to the test Redis), driven over IPC. */
export interface Worker<M extends { op: string }> {
  child: ChildProcess;
  /** The worker's next message, which must have this `op`. */
  next: (op: string) => Promise<M>;
}

/**
 * Forks test workers of one script and kills whatever is left of them with `killAll` (call it in afterAll).
 * Each worker gets REDIS_URL and `env`; its messages are read in order with `next`.
 */
export function workers<M extends { op: string }>(script: string) {
  const children: ChildProcess[] = [];
  const spawn = (env: Record<string, string> = {}): Worker<M> => {
    const child = fork(script, [], {
      env: { ...process.env, REDIS_URL: inject("redisUrl"), ...env },
      stdio: "inherit",
    });
    children.push(child);
    const inbox: M[] = [];
    const waiting: ((m: M) => void)[] = [];
    child.on("message", (m: M) => {
      const w = waiting.shift();
      if (w) w(m);
      else inbox.push(m);
    });
    const next = (op: string) =>
      new Promise<M>((resolve, reject) => {
        const take = (m: M) => (m.op === op ? resolve(m) : reject(new Error(`expected ${op}, got ${m.op}`)));
        const m = inbox.shift();
        if (m) take(m);
        else waiting.push(take);
      });
    return { child, next };
  };
  const killAll = () => {
    for (const c of children) c.kill("SIGKILL");
  };
  return { spawn, killAll };
}
