// redlock 5.0.0-beta.2 ships types at dist/index.d.ts but its package.json "exports" hides them from
// NodeNext resolution. This declares the part of its API the bench uses, copied from those types.
declare module "redlock" {
  import type { Redis } from "ioredis";

  export interface Settings {
    readonly driftFactor: number;
    readonly retryCount: number;
    readonly retryDelay: number;
    readonly retryJitter: number;
    readonly automaticExtensionThreshold: number;
  }
  export class ExecutionError extends Error {}
  export class ResourceLockedError extends Error {}
  export class Lock {
    readonly value: string;
    expiration: number;
    release(): Promise<unknown>;
    extend(duration: number): Promise<Lock>;
  }
  export type RedlockAbortSignal = AbortSignal & { error?: Error };
  export default class Redlock {
    constructor(clients: Iterable<Redis>, settings?: Partial<Settings>);
    acquire(resources: string[], duration: number, settings?: Partial<Settings>): Promise<Lock>;
    using<T>(
      resources: string[],
      duration: number,
      settings: Partial<Settings>,
      routine: (signal: RedlockAbortSignal) => Promise<T>,
    ): Promise<T>;
    quit(): Promise<void>;
  }
}
