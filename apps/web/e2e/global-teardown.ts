import { existsSync, rmSync } from "node:fs";
import { stackFile } from "./harness/paths";
import { stopPid } from "./harness/processes";
import { readStack } from "./harness/stack";

/** Stops everything globalSetup started, by PID, web first and Redis last. */
export default async function globalTeardown(): Promise<void> {
  if (!existsSync(stackFile)) return;
  const stack = readStack();
  for (const p of [...stack.pids].reverse()) await stopPid(p.pid);
  for (const dir of stack.dirs) rmSync(dir, { recursive: true, force: true });
  rmSync(stackFile, { force: true });
}
