// `npm start` (or `node scripts/start.mjs`) as a test runs it: in its own process group, like a terminal's
// foreground job, with its output kept, the processes it announces ("[lockyard] <name>: redis-server pid N at
// …:port") collected, and Ctrl-C (SIGINT to the group) as the way to stop it.
import { type ChildProcess, spawn } from "node:child_process";
// @ts-expect-error plain .mjs helper without types
import { isPortFree } from "../scripts/lib/ports.mjs";

export interface Started {
  name: string;
  pid: number;
  port: number;
}

export interface Stack {
  child: ChildProcess;
  output(): string;
  /** Every process the start script announced, parsed from its output so far. */
  started(): Started[];
  waitFor(what: string, ok: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void>;
  /** SIGINT to the group; resolves once it exited and the given ports (and every announced one) are free. */
  interrupt(ports: number[]): Promise<{ listening: number[]; alive: string[] }>;
  /** SIGKILL to the group and every announced process (afterAll). */
  kill(): void;
}

export const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** The shell's environment minus anything that would configure the stack. */
export function cleanEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      ([k]) =>
        !/^npm_/i.test(k) &&
        !/^(REDIS_(URL|TOPOLOGY|SENTINELS|SENTINEL_NAME|CLUSTER_NODES)|REDLOCK_URLS|DATABASE_URL|PORT|HOST|API_URLS|API_PORTS|WEB_PORT)$/.test(
          k,
        ),
    ),
  ) as Record<string, string>;
}

export function startStack(command: string, args: string[], cwd: string, env: Record<string, string>): Stack {
  let out = "";
  const child = spawn(command, args, {
    cwd,
    env: { ...env, FORCE_COLOR: "0" },
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.on("data", (d) => {
    out += d;
  });
  child.stderr?.on("data", (d) => {
    out += d;
  });
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const started = (): Started[] =>
    [...out.matchAll(/\[lockyard\] (\S+): (?:redis-server )?pid (\d+) at \S+?:(\d+)(?:\/|\s|$)/g)].map(
      (m) => ({
        name: m[1]!,
        pid: Number(m[2]),
        port: Number(m[3]),
      }),
    );
  const waitFor = async (what: string, ok: () => boolean | Promise<boolean>, timeoutMs: number) => {
    const deadline = performance.now() + timeoutMs;
    while (performance.now() < deadline) {
      if (await ok()) return;
      if (child.exitCode !== null)
        throw new Error(`the stack exited (${child.exitCode}) before ${what}:\n${out}`);
      await new Promise((r) => setTimeout(r, 250));
    }
    throw new Error(`timed out waiting for ${what}:\n${out.slice(-4000)}`);
  };
  return {
    child,
    output: () => out,
    started,
    waitFor,
    async interrupt(ports) {
      const announced = started();
      process.kill(-child.pid!, "SIGINT");
      await waitFor("the stack to exit", exited, 30_000).catch((err) => {
        if (!exited()) throw err;
      });
      const all = [...ports, ...announced.map((s) => s.port)];
      const free = async () => (await Promise.all(all.map((p) => isPortFree(p)))).every(Boolean);
      await waitFor("every port to be free", free, 10_000).catch(() => undefined);
      const listening: number[] = [];
      for (const p of all) if (!(await isPortFree(p))) listening.push(p);
      return { listening, alive: announced.filter((s) => alive(s.pid)).map((s) => s.name) };
    },
    kill() {
      const kill = (pid: number) => {
        try {
          process.kill(pid, "SIGKILL");
        } catch {}
      };
      if (child.pid && !exited()) kill(-child.pid);
      for (const s of started()) if (alive(s.pid)) kill(s.pid);
    },
  };
}
