import { createHash } from "node:crypto";
import { Command, type Redis } from "ioredis";

/** A Lua script run by EVALSHA, with EVAL as the fallback when the node does not know it. */
export interface NodeScript {
  readonly lua: string;
  readonly numberOfKeys: number;
}

/** One script call on one node. */
export interface NodeCall<T> {
  readonly reply: Promise<T>;
  /**
   * True once the command was written to the node's connection: from then on it may have run, reply or
   * not. False means it never left this process (refused while the client was down or reconnecting:
   * "Stream isn't writeable…", "Connection is closed.", MaxRetriesPerRequestError on the offline queue),
   * so it cannot have run on the node.
   */
  readonly written: boolean;
}

/** A command that notes the moment ioredis writes it to the socket (the only place it calls toWritable). */
class NotedCommand extends Command {
  written = false;
  override toWritable(socket: object): string | Buffer {
    this.written = true;
    return super.toWritable(socket);
  }
}

const shas = new WeakMap<NodeScript, string>();

/**
 * Runs a script on one node and keeps track of whether it was ever sent. An error message cannot tell:
 * ioredis rejects with the same "Connection is closed." or MaxRetriesPerRequestError both the commands it
 * never sent and those it sent before the connection dropped. So this sends its own command (EVALSHA, then
 * EVAL on NOSCRIPT, as defineCommand does) and notes when ioredis writes it out.
 */
export function callScript<T>(client: Redis, script: NodeScript, args: (string | number)[]): NodeCall<T> {
  let sha = shas.get(script);
  if (sha === undefined) {
    sha = createHash("sha1").update(script.lua).digest("hex");
    shas.set(script, sha);
  }
  const { keyPrefix } = client.options;
  const options = keyPrefix
    ? { replyEncoding: "utf8" as const, keyPrefix }
    : { replyEncoding: "utf8" as const };
  let cmd = new NotedCommand("evalsha", [sha, script.numberOfKeys, ...args], options);
  const reply = (client.sendCommand(cmd) as Promise<T>).catch((err: unknown) => {
    if (!(err instanceof Error && err.message.startsWith("NOSCRIPT"))) throw err;
    // The node answered that it does not know the script, so the EVALSHA did not run; what counts now is
    // whether the EVAL is sent.
    cmd = new NotedCommand("eval", [script.lua, script.numberOfKeys, ...args], options);
    return client.sendCommand(cmd) as Promise<T>;
  });
  return {
    reply,
    get written() {
      return cmd.written;
    },
  };
}
