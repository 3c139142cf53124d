import { fenceKey, queueKeyOf, queueLeasesKeyOf, releaseChannel } from "../resource.js";

/** The other keys and the channel of one lock, derived from its resource (resource.ts). */
export interface LockNames {
  fence: string;
  queue: string;
  queueLeases: string;
  channel: string;
}

/** Enough for every lock a process contends on at once; beyond it the cache starts over (a miss costs ~1 µs). */
const CAP = 4_096;

/**
 * Names per lock key, built once: every acquire and release sends four of them, and building them each time
 * (an encode, four template strings) was a measurable part of an uncontended acquire + release.
 */
export function lockNames(prefix: string): (resource: string, key: string) => LockNames {
  const cache = new Map<string, LockNames>();
  return (resource, key) => {
    let names = cache.get(key);
    if (names === undefined) {
      if (cache.size >= CAP) cache.clear();
      names = {
        fence: fenceKey(resource, prefix),
        queue: queueKeyOf(key),
        queueLeases: queueLeasesKeyOf(key),
        channel: releaseChannel(resource, prefix),
      };
      cache.set(key, names);
    }
    return names;
  };
}
