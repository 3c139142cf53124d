import type { Notification, Pool, PoolClient } from "pg";
import { PG_CHANNEL } from "./sql.js";

const RECONNECT_MS = 500;
/**
 * How long close() waits for the LISTEN connection to be made or to answer UNLISTEN before it destroys it: a
 * server that stopped answering (stalled, or a link that died without a reset) must not hold close() forever.
 */
const GIVE_BACK_MS = 1_000;

export interface ListenEvents {
  /** A NOTIFY on the lock channel; the payload is the released resource. */
  notified(payload: string): void;
  /** The connection was re-made after it died: whatever was released in between went unheard. */
  reconnected(): void;
  /** Whether anybody still waits; a dead connection is re-made only then. */
  wanted(): boolean;
}

/**
 * The one LISTEN connection of a pg backend, checked out of the pool on demand, re-made RECONNECT_MS after
 * it dies (while still wanted), given back with UNLISTEN on close. Its errors are always handled: an
 * unheard 'error' on a checked-out client would crash the process.
 */
export class ListenConnection {
  private client: PoolClient | undefined;
  private connecting: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(
    private readonly pool: Pool,
    private readonly events: ListenEvents,
  ) {}

  /** Resolves once LISTEN is in place (at once when it already is). */
  open(): Promise<void> {
    if (this.client) return Promise.resolve();
    this.connecting ??= this.connect().finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  /** Tries again RECONNECT_MS from now, unless a try is already due, nobody waits, or it is closed. */
  retryLater(): void {
    if (this.closed || this.timer || !this.events.wanted()) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.open().then(
        () => this.events.reconnected(),
        () => this.retryLater(),
      );
    }, RECONNECT_MS);
    this.timer.unref();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    // Still connecting: connect() gives the connection back itself once it is made (closed is set).
    if (this.connecting) await settlesWithin(this.connecting, GIVE_BACK_MS);
    await this.giveBack();
  }

  private async connect(): Promise<void> {
    const c = await this.pool.connect();
    c.on("error", this.onError);
    c.on("end", this.onEnd);
    c.on("notification", this.onNotification);
    this.client = c;
    try {
      await c.query(`LISTEN ${PG_CHANNEL}`);
    } catch (err) {
      this.drop(c, err instanceof Error ? err : new Error(String(err)));
      throw err;
    }
    if (this.closed) await this.giveBack();
  }

  private readonly onNotification = (msg: Notification) => {
    if (msg.channel === PG_CHANNEL && msg.payload !== undefined) this.events.notified(msg.payload);
  };

  private readonly onError = (err: Error) => {
    if (this.client) this.drop(this.client, err);
  };

  private readonly onEnd = () => {
    if (this.client) this.drop(this.client, new Error("LISTEN connection ended"));
  };

  private detach(c: PoolClient): void {
    c.removeListener("notification", this.onNotification);
    c.removeListener("error", this.onError);
    c.removeListener("end", this.onEnd);
  }

  private drop(c: PoolClient, err: Error): void {
    if (this.client !== c) return;
    this.client = undefined;
    this.detach(c);
    c.release(err);
    this.retryLater();
  }

  private async giveBack(): Promise<void> {
    const c = this.client;
    if (!c) return;
    this.client = undefined;
    this.detach(c);
    // pg emits 'error' even while a query is pending; unheard, it would crash the process. Left on a client
    // destroyed below, whose socket may still report its end.
    const swallow = () => {};
    c.on("error", swallow);
    let failure: Error | undefined;
    const unlisten = c.query(`UNLISTEN ${PG_CHANNEL}`).then(
      () => undefined,
      (err: unknown) => {
        failure = err instanceof Error ? err : new Error(String(err));
      },
    );
    if (!(await settlesWithin(unlisten, GIVE_BACK_MS))) {
      failure ??= new Error(`UNLISTEN unanswered for ${GIVE_BACK_MS} ms: the connection is destroyed`);
    }
    c.release(failure); // with an error, the pool destroys the connection instead of reusing it
    if (!failure) c.removeListener("error", swallow);
  }
}

/** True when `p` settled within `ms`, false when the time ran out first. */
async function settlesWithin(p: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  try {
    return await Promise.race([
      p.then(
        () => true,
        () => true,
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
