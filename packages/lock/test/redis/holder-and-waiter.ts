import { Redis } from "ioredis";
import { inject } from "vitest";
import { type CommonLocksOptions, createLocks, createRedlock, type Locks } from "../../src/index.js";
import type { Nodes } from "../redlock-helpers.js";

/** Makes the waiter's client for one Redis URL (a slow link, a subscriber that never answers, …). */
export type WaiterClient = (url: string) => Promise<Redis>;

export type MakePair = (
  waiterClient: WaiterClient,
  waiterOptions: CommonLocksOptions,
) => Promise<{ holder: Locks; waiter: Locks }>;

/**
 * A holder on plain clients and a waiter on clients the test shapes, on one Redis and on Redlock over `nodes`,
 * for `describe.each`. Every client made is pushed to `conns` for the test to disconnect.
 */
export function holderAndWaiter(nodes: () => Nodes, conns: Redis[]): [string, MakePair][] {
  const direct = (url: string) => {
    const c = new Redis(url);
    conns.push(c);
    return c;
  };
  return [
    [
      "one Redis",
      async (waiterClient, waiterOptions) => ({
        holder: createLocks({ redis: direct(inject("redisUrl")), leaseMs: 10_000 }),
        waiter: createLocks({
          redis: await waiterClient(inject("redisUrl")),
          leaseMs: 10_000,
          ...waiterOptions,
        }),
      }),
    ],
    [
      "Redlock",
      async (waiterClient, waiterOptions) => ({
        holder: createRedlock({ clients: nodes().servers.map((s) => direct(s.url)), leaseMs: 10_000 }),
        waiter: createRedlock({
          clients: await Promise.all(nodes().servers.map((s) => waiterClient(s.url))),
          leaseMs: 10_000,
          ...waiterOptions,
        }),
      }),
    ],
  ];
}
