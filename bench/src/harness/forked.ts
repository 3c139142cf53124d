import { type ChildProcess, fork } from "node:child_process";

/** The answer a forked process sends when it fails; every protocol here includes it. */
export interface FailedMessage {
  type: "error";
  message: string;
}

/**
 * A bench process forked from `file` that talks to the parent in turns over IPC. Messages that arrive before
 * anyone asks are kept in order; a process that exits or stays silent for `phaseMs` turns into an error.
 */
export class Forked<ToChild, FromChild extends { type: string }> {
  private readonly child: ChildProcess;
  private readonly inbox: (FromChild | FailedMessage)[] = [];
  private waiter: ((m: FromChild | FailedMessage) => void) | null = null;
  readonly exited: Promise<number | null>;

  constructor(
    file: string,
    private readonly name: string,
    private readonly phaseMs: number,
  ) {
    this.child = fork(file, [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
    this.exited = new Promise((resolve) => this.child.once("exit", (code) => resolve(code)));
    this.child.on("message", (m: FromChild) => this.deliver(m));
    this.child.once("exit", (code, signal) => {
      if (code !== 0) this.deliver({ type: "error", message: `exited with ${signal ?? `code ${code}`}` });
    });
  }

  send(m: ToChild): void {
    this.child.send(m as object);
  }

  /** The next message, which must be of `type`. */
  async expect<T extends FromChild["type"]>(type: T): Promise<Extract<FromChild, { type: T }>> {
    const m = await this.next();
    if (m.type === "error") throw new Error(`${this.name} failed: ${(m as FailedMessage).message}`);
    if (m.type !== type) throw new Error(`${this.name}: expected "${type}", got "${m.type}"`);
    return m as Extract<FromChild, { type: T }>;
  }

  /** Kills the process if it is still running (after an error). */
  stop(): void {
    if (this.child.exitCode === null && this.child.signalCode === null) this.child.kill();
  }

  private next(): Promise<FromChild | FailedMessage> {
    const queued = this.inbox.shift();
    if (queued) return Promise.resolve(queued);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiter = null;
        reject(new Error(`${this.name} sent nothing in ${this.phaseMs} ms`));
      }, this.phaseMs);
      this.waiter = (m) => {
        clearTimeout(timer);
        resolve(m);
      };
    });
  }

  private deliver(m: FromChild | FailedMessage): void {
    const w = this.waiter;
    if (w) {
      this.waiter = null;
      w(m);
    } else this.inbox.push(m);
  }
}

/** The child's side: the parent's messages in order, and a send that resolves once the message is out. */
export function parentChannel<ToChild extends { type: string }, FromChild>() {
  const inbox: ToChild[] = [];
  let waiting: ((m: ToChild) => void) | null = null;
  process.on("message", (m: ToChild) => {
    if (waiting) {
      const w = waiting;
      waiting = null;
      w(m);
    } else inbox.push(m);
  });
  return {
    async receive<T extends ToChild["type"]>(type: T): Promise<Extract<ToChild, { type: T }>> {
      const m = inbox.shift() ?? (await new Promise<ToChild>((resolve) => (waiting = resolve)));
      if (m.type !== type) throw new Error(`expected "${type}" from the parent, got "${m.type}"`);
      return m as Extract<ToChild, { type: T }>;
    },
    send(m: FromChild | FailedMessage): Promise<void> {
      return new Promise((resolve, reject) =>
        process.send!(m, undefined, {}, (err) => (err ? reject(err) : resolve())),
      );
    },
  };
}
