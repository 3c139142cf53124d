import type { Cluster, Redis } from "ioredis";

/** A Lua script of the API's, with its KEYS/ARGV/returns in a comment beside it. */
export interface Script {
  readonly name: string;
  readonly numberOfKeys: number;
  readonly lua: string;
}

/**
 * The one way the API registers its scripts (as the library's withScripts does its own): `defineCommand`,
 * which runs EVALSHA with the NOSCRIPT fallback, once per client. `Commands` types what the scripts add.
 *
 *   const scripts = defineScripts<{ lockyardX(key: string): Promise<number> }>({ name: "lockyardX", … });
 *   await scripts(redis).lockyardX(key);
 */
export function defineScripts<Commands extends object>(...list: readonly Script[]) {
  const defined = new WeakSet<Redis | Cluster>();
  return <R extends Redis | Cluster>(redis: R): R & Commands => {
    if (!defined.has(redis)) {
      for (const s of list) redis.defineCommand(s.name, { numberOfKeys: s.numberOfKeys, lua: s.lua });
      defined.add(redis);
    }
    return redis as R & Commands;
  };
}
