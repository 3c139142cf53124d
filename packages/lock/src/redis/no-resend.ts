import { createHash } from "node:crypto";
import { ReplyLostError } from "../errors.js";

/**
 * The library's scripts are never sent twice. ioredis re-sends every command still waiting for its reply when a
 * connection comes back (`autoResendUnfulfilledCommands`, on by default), and a Cluster re-sends one that failed
 * with "Connection is closed." to whichever node now serves its slot. A lock script that ran before the
 * connection dropped would then run again: a re-entered release decrements twice and frees a lock its outer hold
 * still has (two holders), a grant raises its own re-entry count (the lock outlives its release), a fenced write
 * takes its delta twice. Instead, the first send's outcome is unknown and the caller is told so: such a command
 * is rejected with ReplyLostError when its connection closes (so it never waits for a reconnect, nor forever when
 * re-sending is off and no commandTimeout is set), and a re-send of it writes nothing. That is the failure every
 * path of the core already handles (a reply lost after Redis ran the command).
 * The user's own commands on the same client keep the client's settings. Installed once per connection: on a
 * Cluster, on every node it has and gets (`+node`).
 * It reads two of ioredis's internals, on versions 5 and 6 alike: `sendCommand` (which ioredis itself wraps in
 * monitor mode) and the `commandQueue`/`prevCommandQueue` of commands written and not answered yet.
 */
export function neverResend(client: object, scripts: readonly { name: string; lua: string }[]): void {
  const names = scriptNames(scripts);
  const c = client as Partial<ClusterLike>;
  if (typeof c.nodes === "function" && typeof c.on === "function") {
    for (const node of c.nodes("all")) guard(node as Connection, names);
    c.on("+node", (node: object) => guard(node as Connection, names));
  } else {
    guard(client as Connection, names);
  }
}

interface ClusterLike {
  nodes(role: "all"): object[];
  on(event: "+node", fn: (node: object) => void): unknown;
}

interface Command {
  name: string;
  args: unknown[];
  promise: Promise<unknown>;
  reject(err: Error): void;
}
interface Queue {
  toArray?(): { command: Command }[];
  peekBack?(): { command: Command } | undefined;
}
interface Connection {
  sendCommand(command: Command, ...rest: unknown[]): Promise<unknown>;
  on(event: "close", fn: () => void): unknown;
  commandQueue?: Queue;
  prevCommandQueue?: Queue | null;
}

/** Script SHA-1 and source (ioredis falls back to EVAL on NOSCRIPT) → the script's name, for the error. */
function scriptNames(scripts: readonly { name: string; lua: string }[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const s of scripts) {
    names.set(createHash("sha1").update(s.lua).digest("hex"), s.name);
    names.set(s.lua, s.name);
  }
  return names;
}

const guarded = new WeakSet<object>();
/** Commands of ours written to a connection whose answer has not come yet. */
const unanswered = new WeakSet<Command>();
const rejectWrapped = new WeakSet<Command>();

function guard(conn: Connection, names: Map<string, string>): void {
  // Anything else that defines commands (the simulation's clients) has no connection to guard.
  if (guarded.has(conn) || typeof conn.sendCommand !== "function" || typeof conn.on !== "function") return;
  guarded.add(conn);
  const scriptOf = (command: Command): string | undefined =>
    command.name === "evalsha" || command.name === "eval" ? names.get(String(command.args[0])) : undefined;
  const send = conn.sendCommand;
  conn.sendCommand = function (this: Connection, command: Command, ...rest: unknown[]) {
    const script = scriptOf(command);
    if (script === undefined) return send.call(this, command, ...rest);
    if (unanswered.has(command)) {
      command.reject(new ReplyLostError(script));
      return command.promise;
    }
    const sent = send.call(this, command, ...rest);
    if (this.commandQueue?.peekBack?.()?.command === command) {
      unanswered.add(command);
      answeredOnReplyError(command);
    }
    return sent;
  };
  conn.on("close", () => {
    // ioredis emits "close" on the next tick, after it kept the unanswered commands for a re-send.
    for (const queue of [conn.prevCommandQueue, conn.commandQueue]) {
      for (const { command } of queue?.toArray?.() ?? []) {
        if (unanswered.has(command)) command.reject(new ReplyLostError(scriptOf(command) ?? command.name));
      }
    }
  });
}

/**
 * A reply error is Redis's answer: the script did not run (a Cluster's MOVED, ASK, TRYAGAIN or CLUSTERDOWN, which
 * the Cluster then sends elsewhere or again) or it failed; sending it again is no re-send.
 */
function answeredOnReplyError(command: Command): void {
  if (rejectWrapped.has(command)) return;
  rejectWrapped.add(command);
  const reject = command.reject;
  command.reject = function (this: Command, err: Error) {
    if (err?.name === "ReplyError") unanswered.delete(command);
    reject.call(this, err);
  };
}
