import { type ChildProcess, fork } from "node:child_process";
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import type { ChildReply, ChildRequest } from "./child-protocol.js";

/** dist/demo/child.js next to this file; from the TypeScript sources (tests), the built copy. */
function childScript(): string {
  const built = fileURLToPath(new URL("./child.js", import.meta.url));
  if (existsSync(built)) return built;
  return fileURLToPath(new URL("../../dist/demo/child.js", import.meta.url));
}

/** A lock-holding child process, ended by PID. */
export class LockChild {
  readonly #child: ChildProcess;

  constructor() {
    this.#child = fork(childScript(), [], { stdio: ["ignore", "ignore", "inherit", "ipc"] });
  }

  get pid(): number {
    return this.#child.pid ?? -1;
  }

  /** Sends one request and waits for its reply (or the process dying, or the deadline). */
  ask(req: ChildRequest, timeoutMs: number): Promise<ChildReply> {
    return new Promise((resolve, reject) => {
      const cleanup = () => {
        clearTimeout(timer);
        this.#child.off("message", onMessage);
        this.#child.off("exit", onExit);
      };
      const onMessage = (msg: ChildReply) => {
        cleanup();
        resolve(msg);
      };
      const onExit = (code: number | null, signal: string | null) => {
        cleanup();
        reject(new Error(`child exited (${signal ?? code}) before answering ${req.type}`));
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`child did not answer ${req.type} within ${timeoutMs} ms`));
      }, timeoutMs);
      timer.unref();
      this.#child.on("message", onMessage);
      this.#child.once("exit", onExit);
      this.#child.send(req);
    });
  }

  signal(sig: "SIGSTOP" | "SIGCONT" | "SIGKILL"): void {
    if (this.#child.pid !== undefined && this.#child.exitCode === null) process.kill(this.#child.pid, sig);
  }

  get alive(): boolean {
    return this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** Resolves when the process is gone; kills it first if needed (SIGCONT in case it is stopped). */
  async stop(): Promise<void> {
    if (!this.alive) return;
    const exited = new Promise<void>((resolve) => this.#child.once("exit", () => resolve()));
    this.signal("SIGCONT");
    this.signal("SIGKILL");
    await exited;
  }
}
