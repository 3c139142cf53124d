/**
 * Delivers the answers of the lock commands sent on one connection in the order they were sent, which on one
 * connection is the order Redis ran them in. ioredis settles each command's promise as its reply is parsed, but
 * what the caller sees next depends on how many promise hops lie between (a defined script's NOSCRIPT
 * fallback, a batch fanned out to its callers), so two replies read at once could reach their callers in either
 * order. Here every answer waits until the answers of the commands sent before it have been delivered: a
 * release's answer (and its "released" event, emitted at delivery) always precedes the next owner's grant.
 */
export interface InOrder {
  /** Registers a command at the moment it is sent; `deliver` runs once, after every earlier command's. */
  track<T>(sent: Promise<T>, deliver: Delivery<T>): void;
}

export interface Delivery<T> {
  resolve(value: T): void;
  reject(reason: unknown): void;
}

type Slot =
  | { state: "pending" }
  | { state: "fulfilled"; value: unknown }
  | { state: "rejected"; reason: unknown };

interface Entry {
  slot: Slot;
  deliver: Delivery<unknown>;
}

const perConnection = new WeakMap<object, InOrder>();

/** One order per connection: every Locks on that client shares it (their commands share its socket). */
export function inOrderOn(connection: object): InOrder {
  let order = perConnection.get(connection);
  if (!order) {
    order = inOrder();
    perConnection.set(connection, order);
  }
  return order;
}

function inOrder(): InOrder {
  const queue: Entry[] = [];
  let head = 0;
  const drain = () => {
    while (head < queue.length) {
      const e = queue[head]!;
      if (e.slot.state === "pending") return;
      queue[head++] = undefined as unknown as Entry;
      if (e.slot.state === "fulfilled") e.deliver.resolve(e.slot.value);
      else e.deliver.reject(e.slot.reason);
    }
    queue.length = 0;
    head = 0;
  };
  return {
    track(sent, deliver) {
      const e: Entry = { slot: { state: "pending" }, deliver: deliver as Delivery<unknown> };
      queue.push(e);
      sent.then(
        (value) => {
          e.slot = { state: "fulfilled", value };
          drain();
        },
        (reason: unknown) => {
          e.slot = { state: "rejected", reason };
          drain();
        },
      );
    },
  };
}

/** On a Cluster the commands go to several connections with no order between them: deliver as they come. */
export const anyOrder: InOrder = {
  track(sent, deliver) {
    sent.then(deliver.resolve, deliver.reject);
  },
};
