import type { LockStore } from "../types.js";
import type { Subscription } from "./subscription.js";
import { type Change, type Entry, entryId, viewOf } from "./views.js";

const STORES: LockStore[] = ["redis", "redlock", "postgres"];

/**
 * Sends one change to every subscriber as a delta filtered by its prefix. `removed` names keys, not stores, so
 * a lock still held on a removed key in another store is re-sent in `added` of the same delta.
 */
export function fanOut(
  subs: Iterable<Subscription>,
  change: Change,
  entries: ReadonlyMap<string, Entry>,
  instanceId: string,
): void {
  const at = Date.now();
  const survivors = change.removed.flatMap((r) =>
    STORES.flatMap((store) => {
      const e = store === r.store ? undefined : entries.get(entryId(store, r.key));
      return e && !change.added.includes(e) && !change.changed.includes(e) ? [e] : [];
    }),
  );
  for (const sub of subs) {
    const mine = (e: Entry) => e.resource.startsWith(sub.prefix);
    const added = [...change.added, ...survivors].filter(mine);
    const changed = change.changed.filter(mine);
    const removed = change.removed.filter(mine).map((e) => e.key);
    if (added.length + changed.length + removed.length === 0) continue;
    sub.push({
      kind: "delta",
      at,
      instanceId,
      added: added.map((e) => viewOf(e, at)),
      changed: changed.map((e) => viewOf(e, at)),
      removed,
    });
  }
}
