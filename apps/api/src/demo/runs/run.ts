import type { Redis } from "ioredis";
import type { Logger } from "pino";
import type { RunEvent } from "../../types.js";
import { runMetaKey } from "./keys.js";
import { appendRunEvent, markRun } from "./store.js";

/** How often a running run proves it is alive, renews what it holds and looks for a cancel request. */
export const HEARTBEAT_MS = 1_000;

export interface RunOptions {
  redis: Redis;
  logger: Logger;
  runId: string;
  retentionS: number;
  /** Called every heartbeat (renew the burst guard, a scenario slot). */
  onHeartbeat?: () => Promise<void>;
  /** Called when a cancel request from any instance is seen. */
  onCancelRequested: () => void;
  /** Local watchers: called after each stored event. */
  onAppend: () => void;
}

/**
 * A demo run's event log: events are stored in order, each with its index (the tracked id watchers resume
 * from). Runs on the instance that started it, whether or not anybody watches.
 */
export class RunLog {
  #chain: Promise<void> = Promise.resolve();
  #ended = false;
  readonly #heartbeat: NodeJS.Timeout;

  constructor(readonly opts: RunOptions) {
    this.#heartbeat = setInterval(() => void this.#beat(), HEARTBEAT_MS);
    this.#heartbeat.unref();
  }

  get runId(): string {
    return this.opts.runId;
  }

  /** Stores an event after every earlier one; never rejects (a lost event is logged). */
  emit(event: RunEvent): Promise<void> {
    if (this.#ended) return this.#chain;
    const { redis, runId, retentionS } = this.opts;
    this.#chain = this.#chain
      .then(() => appendRunEvent(redis, runId, event, retentionS))
      .then(
        () => this.opts.onAppend(),
        (err: unknown) => this.opts.logger.warn({ err, runId }, "run event not stored"),
      );
    return this.#chain;
  }

  /** Stores the final event and marks the run finished. */
  async end(event: RunEvent): Promise<void> {
    await this.emit(event);
    this.#ended = true;
    clearInterval(this.#heartbeat);
    const { redis, runId, retentionS } = this.opts;
    await markRun(redis, runId, { status: "finished" }, retentionS).catch(() => undefined);
    this.opts.onAppend();
  }

  async #beat(): Promise<void> {
    const { redis, runId, retentionS } = this.opts;
    try {
      await markRun(redis, runId, { heartbeatAt: Date.now() }, retentionS);
      if ((await redis.hget(runMetaKey(runId), "cancel")) === "1") this.opts.onCancelRequested();
      await this.opts.onHeartbeat?.();
    } catch (err) {
      this.opts.logger.warn({ err, runId }, "run heartbeat failed");
    }
  }
}
